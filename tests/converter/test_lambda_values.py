"""A lambda handed to a layer while the model is built (VGAE's ``GraphConvSparse(..., activation=lambda x: x)``), or
chosen by a conditional expression: a static graph compiles it only from a line that assigns it; the converter binds
it to a name on the line before, and the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class GraphConv(nn.Module):
        def __init__(self, cin, cout, activation=torch.relu):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(cin, cout) * 0.5)
            self.activation = activation

        def forward(self, x):
            return self.activation(x @ self.weight)


    class Net(nn.Module):
        def __init__(self, squash=False):
            super().__init__()
            self.base = GraphConv(4, 6)
            self.mean = GraphConv(6, 3, activation=lambda x: x)
            self.scale = GraphConv(6, 3,
                                   activation=lambda x: 2 * x)
            self.out = nn.Sigmoid() if squash else lambda x: x - 1

        def forward(self, x):
            h = self.base(x)
            return self.out(self.mean(h) + self.scale(h))
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_lambdas_given_to_layers_match(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "_mp_lambda = lambda x: x\n" in code and "activation=_mp_lambda)" in code
    assert "nn.Sigmoid() if squash else _mp_lambda" in code
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "lam", mode, atol=1e-5)
