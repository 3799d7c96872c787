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


SHORTCUT = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class LambdaLayer(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x)


    class Block(nn.Module):
        def __init__(self, planes=4):
            super().__init__()
            self.shortcut = LambdaLayer(lambda x:
                                        F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes // 4, planes // 4), "constant", 0))

        def forward(self, x):
            return self.shortcut(x) * 2
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_lambda_broken_over_lines_inside_the_call_is_bound_in_parentheses(tmp_path, mode):
    """akamaster's CIFAR ResNet option-A shortcut: the lambda's body starts on the next line, which the call's
    parentheses allowed; bound on a line of its own it keeps its parentheses (the file parsed: MP299 before)."""
    result = convert_source(SHORTCUT)
    assert not [d for d in result.diagnostics if d.code == "MP299"]
    assert "_mp_lambda = (lambda x:\n" in result.code
    x = np.random.default_rng(2).standard_normal((2, 4, 6, 6)).astype(np.float32)
    assert_port_matches_in_mode(SHORTCUT, result.code, "Block", [x], tmp_path, "lam_break", mode, atol=1e-6)


DEFAULTS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class DualPath(nn.Module):
        def __init__(self, scheme=(lambda module, x1, x2: module(x1) + x2), *,
                     ordinal=lambda module, x1, x2: (module(x1),
                                                     x2 * 3)):
            super().__init__()
            self.scheme = scheme
            self.ordinal = ordinal
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)

        def forward(self, x):
            x1, x2 = self.ordinal(self.a, x, x * 2)
            return self.scheme(self.b, x1, x2)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_lambda_as_a_parameters_default_is_bound_before_the_def(tmp_path, mode):
    """pytorchcv's DualPathSequential (batch15, first contact: jasper_dr, quartznet_dw): lambdas as the defaults of
    __init__'s parameters, stored and called in forward. Their source line is the def's ("Parse Lambda Function Fail.
    Node type must be Lambda, but got Tuple" in a graph); bound on the lines before the def they compile."""
    code = convert_source(DEFAULTS).code
    assert "_mp_default_scheme = (lambda module, x1, x2: module(x1) + x2)" in code, code
    assert "def __init__(self, scheme=_mp_default_scheme, *," in code, code
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(DEFAULTS, code, "DualPath", [x], tmp_path, "lam_default", mode, atol=1e-6)
