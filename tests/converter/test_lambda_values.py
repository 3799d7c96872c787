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


TABLE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    DERIVATIVES = {
        "tanh": lambda x: 1 - torch.tanh(x) ** 2,
        "elu": lambda x: (x > 0).float() + \\
                         (x < 0).float() * torch.exp(x),
    }


    class Planar(nn.Module):
        def __init__(self, dim=3, h="elu"):
            super().__init__()
            self.h = h
            self.w = nn.Parameter(torch.linspace(-1, 1, dim))

        def forward(self, x):
            lin = x @ self.w
            return DERIVATIVES[self.h](lin)[:, None] * self.w
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_lambdas_in_a_module_level_display_are_bound_first(tmp_path, mode):
    """tonyduan's normalizing flows (session 51, nflows_duan/maf_planar): a module-level dict of lambdas read in
    forward. A graph parses a lambda from its first line to the end of its statement, here the dict's item lines
    ("SyntaxError: invalid syntax" in MindSpore's own parser); each lambda is bound on a line of its own before the
    display, at module level as in a class body or a method. (nflows keys its table by the functions themselves,
    which a graph cannot build: "make_dict evaluator key only supports string, number, ...", still loud there.)"""
    code = convert_source(TABLE).code
    assert "\n_mp_lambda = lambda x: 1 - " in code, code
    assert "\n_mp_lambda_2 = (lambda x: " in code, code
    x = np.random.default_rng(4).standard_normal((5, 3)).astype(np.float32)
    assert_port_matches_in_mode(TABLE, code, "Planar", [x], tmp_path, "lam_table", mode, atol=1e-6)
