"""torch.amax / amin (function or method) over a ``dim`` given as a literal int or tuple of ints, on an input that
is no integer or bool tensor by the facts (a layer's output, a float draw, a name bound to one), is MindSpore's own
``ops.amax``/``ops.amin`` (TableCallTransform._raising_extent_target, NATIVE_RAISING_EXTENT): the runtime's
additions are an IndexError over an empty extent, where torch raises too, and bool ordered as uint8. An input of
unknown dtype (a parameter: a bool mask?), or no dim, keeps the runtime's. The converted module runs against torch in
PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Peaks(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 6)

        def forward(self, x, mask):
            sim = self.fc(x)
            a = sim - sim.amax(dim=-1, keepdim=True).detach()
            b = torch.amin(sim, dim=(0, 2))
            c = self.fc(x).amax(1)
            d = mask.amax(dim=-1)
            e = sim.amax()
            return a, b, c, d, e
""")


def test_a_float_amax_over_a_literal_dim_is_mindspores():
    code = convert_source(SOURCE).code
    assert "a = sim - ops.stop_gradient(ops.amax(sim, axis=-1, keepdims=True))" in code, code
    assert "b = ops.amin(sim, axis=(0, 2))" in code and "c = ops.amax(self.fc(x), axis=1)" in code, code
    assert "d = mp_math.amax(mask, dim=-1)" in code and "e = mp_math.amax(sim)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_native_amax_matches_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    mask = rng.standard_normal((2, 5)) > 0
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Peaks", [x, mask], tmp_path, "amax", mode)
