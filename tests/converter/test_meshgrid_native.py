"""torch.meshgrid whose tensors the call shows is MindSpore's own ``ops.meshgrid`` (issue 30: native ports). The
table's target is ``mindport.runtime.math.meshgrid`` because torch also takes the tensors as one list or tuple,
which ``ops.meshgrid`` refuses; with two or more arguments, none starred (vit-pytorch's relative position grids:
``torch.meshgrid(pos, pos, indexing = 'ij')``), or one list/tuple display of them, the call is ``ops.meshgrid``
(mapping transform ``meshgrid_varargs``; ``indexing`` always written, MindSpore's default is 'xy'). One name or a
starred argument keeps the runtime function. Expected values come from torch; the fixture is written here."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 5)

        def forward(self, x):
            h = self.fc(x)
            pos = torch.arange(h.shape[-1])
            a = torch.stack(torch.meshgrid(pos, pos, indexing='ij'))
            gy, gx = torch.meshgrid([torch.arange(3), torch.arange(4) * 2])
            c = torch.stack(torch.meshgrid(torch.arange(2.), torch.tensor([7.]), pos.float() * h[0, 0], indexing='xy'), dim=-1)
            coords = [pos, torch.arange(3)]
            d, e = torch.meshgrid(coords, indexing='xy')
            f, g = torch.meshgrid(*coords, indexing='ij')
            return h, a, gy, gx, c, d, e, f, g
""")


def test_shown_tensors_are_mindspores_meshgrid():
    code = convert_source(SOURCE).code
    assert "a = ops.stack(ops.meshgrid(pos, pos, indexing='ij'))" in code, code
    assert "gy, gx = ops.meshgrid(ops.arange(start=3), ops.arange(start=4) * 2, indexing='ij')" in code, code
    assert "c = ops.stack(ops.meshgrid(ops.arange(start=2.), " in code, code


def test_a_list_known_when_it_runs_keeps_the_runtime_meshgrid():
    code = convert_source(SOURCE).code
    assert "d, e = mp_math.meshgrid(coords, indexing='xy')" in code, code
    assert "f, g = mp_math.meshgrid(*coords, indexing='ij')" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_meshgrid_matches_torch(mode, tmp_path):
    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "meshgrid", mode, rtol=1e-5, atol=1e-6)
