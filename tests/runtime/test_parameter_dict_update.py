"""``nn.ParameterDict().update({...})`` (NGCF grows its dict of per-layer weights that way): the runtime's
ParameterDict had no ``update`` ("The 'ParameterDict' object has no attribute 'update'"). The port converts, its
parameters carry torch's names (``weights.W_0``) and it matches torch, in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Layers(nn.Module):
        def __init__(self, sizes=(3, 4, 2)):
            super().__init__()
            self.weights = nn.ParameterDict()
            for k in range(len(sizes) - 1):
                self.weights.update({'W_%d' % k: nn.Parameter(torch.randn(sizes[k], sizes[k + 1]))})
                self.weights.update([('b_%d' % k, nn.Parameter(torch.randn(1, sizes[k + 1])))])
            self.n = len(sizes) - 1

        def forward(self, x):
            for k in range(self.n):
                x = torch.tanh(torch.matmul(x, self.weights['W_%d' % k]) + self.weights['b_%d' % k])
            return x
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_parameter_dict_update_matches_torch(mode, tmp_path):
    result = convert_source(SOURCE)
    assert ".update(" in result.code and "torch" not in result.code, result.code
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Layers", [x], tmp_path, "pdict_update", mode)
