"""A layer torch computes for floating inputs only (native_facts._FLOAT_OR_RAISE_LAYERS: nn.GELU, nn.Mish, nn.ELU,
nn.SELU, nn.CELU, nn.Softplus, nn.LogSigmoid, nn.Hardswish, nn.Hardsigmoid, nn.LeakyReLU, nn.Softmax, nn.LogSoftmax;
each raises on an integer, bool or complex input, measured on torch 2.13) gives a floating output for the float
facts (FloatFacts.layer_kind "float"), as its functional form does (_FLOAT_OR_RAISE). A join of its output with a
layer's is MindSpore's own cat, an amax of a Softmax layer's output ops.amax; nn.ReLU of a parameter (an integer stays
one) keeps the promotion. The converted module runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Acts(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = nn.GELU()
            self.soft = nn.Softmax(dim=-1)
            self.relu = nn.ReLU()

        def forward(self, x, y):
            a = torch.cat((self.act(x), self.fc(y)), dim=-1)
            b = self.soft(x).amax(dim=-1)
            c = torch.cat((self.relu(x), self.fc(y)), dim=-1)
            return a, b, c
""")


def test_an_activation_layer_that_refuses_integers_gives_floats():
    code = convert_source(SOURCE).code
    assert "a = ops.cat((self.act(x), self.fc(y)), axis=-1)" in code, code
    assert "b = ops.amax(self.soft(x), axis=-1)" in code, code
    assert "c = ops.cat(mp_tensor.promoted((self.relu(x), self.fc(y))), axis=-1)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_activation_layer_floats_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = rng.standard_normal((2, 3, 4)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Acts", [x, y], tmp_path, "acts", mode, rtol=1e-5, atol=1e-5)
