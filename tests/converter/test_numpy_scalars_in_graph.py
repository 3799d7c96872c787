"""A numpy function of a size turned into a Python number in forward (Informer's ProbAttention: ``self.factor *
np.ceil(np.log(L_K)).astype('int').item()``): a static graph computes the numpy call as a scalar of its own, with
no ``astype`` ("'Float' object has no attribute 'astype'"); the port writes ``int(np.ceil(np.log(L_K)))`` and
matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn


    class Sampled(nn.Module):
        def __init__(self, factor=2):
            super().__init__()
            self.factor = factor
            self.proj = nn.Linear(4, 4)

        def forward(self, q):
            B, L, D = q.shape
            u = self.factor * np.ceil(np.log(L)).astype('int').item()
            u = u if u < L else L
            scale = np.sqrt(D).astype(np.float32).item()
            top = self.proj(q)[:, :u] / scale
            return top.sum(dim=1), top
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_numpy_number_of_a_size_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "u = self.factor * int(np.ceil(np.log(L)))" in code, code
    assert "scale = float(np.sqrt(D))" in code, code
    x = np.random.default_rng(0).standard_normal((2, 12, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Sampled", [x], tmp_path, "np_scalar", mode, atol=1e-6)
