"""Issue 30 (native ports): ``F.normalize`` of a name is written with MindSpore's own ops, ``(x / ops.clamp(ops.norm(
x, p, dim, keepdim=True), min=eps))``: what the runtime's normalize computes (MindSpore 2.10 has no ops.normalize and
mint's has no CPU kernel), so the same numbers in every dtype and mode; the input is read twice, so an input that is
not a name (a call, an attribute) keeps ``mp_F.normalize``, as do ``p``/``dim``/``eps`` that are not names,
attributes or numbers. Run against torch in PyNative and GRAPH_MODE, a row of zeros included (``eps`` decides it)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def l2norm(t, dim=-1, eps=1e-12):
        return F.normalize(t, dim=dim, eps=eps)


    class Net(nn.Module):
        def __init__(self, dim=5):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.eps = 1e-6
            self.scale = dim ** 0.5

        def forward(self, x):
            a = F.normalize(x, dim=-1) * self.scale
            b = F.normalize(x, p=2, dim=1, eps=self.eps)
            c = l2norm(x, dim=0)
            d = F.normalize(self.fc(x), dim=-1)
            e = -F.normalize(x, 1.0, 2).sum(-1)
            return a, b, c, d, e
""")


def test_normalize_of_a_name_is_written_with_mindspore_ops():
    code = convert_source(SOURCE).code
    assert "return (t / ops.clamp(ops.norm(t, 2.0, dim, keepdim=True), min=eps))" in code, code
    assert "a = (x / ops.clamp(ops.norm(x, 2.0, -1, keepdim=True), min=1e-12)) * self.scale" in code, code
    assert "b = (x / ops.clamp(ops.norm(x, 2, 1, keepdim=True), min=self.eps))" in code, code
    assert "(x / ops.clamp(ops.norm(x, 1.0, 2, keepdim=True), min=1e-12))" in code, code
    assert "d = mp_F.normalize(self.fc(x), dim=-1)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_normalize_matches_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(np.float32)
    x[0, 1] = 0.0  # a row of zeros: eps decides
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "normalize", mode, rtol=1e-5, atol=1e-6)
