"""A torch function whose ``inplace`` flag is a value known only at run time (batch 8 DCUnet's
``class CLeakyReLU(nn.LeakyReLU)`` calls ``F.leaky_relu(xr, self.negative_slope, self.inplace)``) converts to both
forms chosen by that value, ``(mp_inplace.leaky_relu_inplace(x, alpha=...) if self.inplace else
ops.leaky_relu(x, alpha=...))``. It was the runtime adapter, ``mp_adapt.api("torch.nn.functional.leaky_relu")(...)``,
which maps the call in Python and does not compile in GRAPH_MODE with more than one argument ("in GRAPH_MODE an
adapter of a torch function takes one positional argument"); in a graph the flag is a constant and one branch is
compiled. Expected values are torch's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class CLeakyReLU(nn.LeakyReLU):
        def forward(self, xr, xi):
            return F.leaky_relu(xr, self.negative_slope, self.inplace), \\
                F.leaky_relu(xi, self.negative_slope, self.inplace)


    class Net(nn.Module):
        def __init__(self, inplace=True):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.act = CLeakyReLU(0.1)
            self.act_inplace = CLeakyReLU(0.3, inplace=True)
            self.inplace = inplace

        def forward(self, xr, xi):
            a, b = self.act(self.lin(xr), self.lin(xi))
            c, d = self.act_inplace(self.lin(xr), xi * 2)
            e = F.relu(self.lin(xi) - 0.1, inplace=self.inplace)
            f = F.hardtanh(xr * 3, -1.0, 1.0, self.inplace)
            return a, b, c, d, e, f
""")


def test_both_forms_chosen_by_the_flag():
    result = convert_source(SOURCE)
    assert 'mp_adapt.api("torch.nn.functional' not in result.code
    assert ("(mp_inplace.leaky_relu_inplace(xr, alpha=self.alpha) if self.inplace else "
            "ops.leaky_relu(xr, alpha=self.alpha))") in result.code
    assert not result.diagnostics, [d.format() for d in result.diagnostics]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    rng = np.random.default_rng(0)
    xr, xi = (rng.standard_normal((2, 4)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(SOURCE, code, "Net", [xr, xi], tmp_path, "flag_switch", mode, atol=1e-6)
