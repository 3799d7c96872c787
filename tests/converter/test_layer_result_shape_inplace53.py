"""A shape-changing in-place method on a layer's result, ``conv(x).unsqueeze_(dim=1)`` (trials sknet/skconv: the
branches of a selective-kernel block, each an ``nn.Sequential(conv, norm, nn.ReLU(inplace=False))`` held in a
ModuleList filled by ``append`` and run as ``for i, conv in enumerate(self.convs)``; its ``fc(z).unsqueeze_(dim=1)``
of ``nn.Linear`` members). Such a result is a new tensor nothing else holds when the layer gives one on every call
(native_facts.layer_gives_new: a conv, linear, norm..., an activation never asked to work in place, a Sequential
ending in one), so its out-of-place method is the same program; the runtime's unsqueeze_ raised in a graph (a graph
cannot change a tensor's shape in place). A layer that may give its input itself (``nn.Identity``, ``nn.Dropout``,
a Sequential ending in one, ``nn.ReLU(inplace=True)``) keeps the runtime's in-place call. Fails before (mindport's
RuntimeError in the graph)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Branches(nn.Module):
        def __init__(self, c=4, m=2):
            super().__init__()
            self.convs = nn.ModuleList([])
            for i in range(m):
                self.convs.append(nn.Sequential(
                    nn.Conv2d(c, c, kernel_size=3 + 2 * i, padding=1 + i),
                    nn.BatchNorm2d(c),
                    nn.ReLU(inplace=False)))
            self.heads = nn.ModuleList([nn.Linear(c, c) for _ in range(m)])
            self.proj = nn.Linear(c, c)

        def forward(self, x):
            for i, conv in enumerate(self.convs):
                branch = conv(x).unsqueeze_(dim=1)
                if i == 0:
                    stacked = branch
                else:
                    stacked = torch.cat([stacked, branch], dim=1)
            pooled = stacked.sum(dim=1).mean(-1).mean(-1)
            weights = []
            for head in self.heads:
                weights.append(head(pooled).unsqueeze_(1))
            w = torch.softmax(torch.cat(weights, dim=1), dim=1)
            z = self.proj(pooled).unsqueeze_(-1)
            return (stacked * w[:, :, :, None, None]).sum(dim=1), z, x
""")

KEEPS = textwrap.dedent("""\
    import torch.nn as nn


    class Keeps(nn.Module):
        def __init__(self):
            super().__init__()
            self.same = nn.ModuleList([nn.Identity(), nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.1))])
            self.act = nn.ReLU(inplace=True)

        def forward(self, x):
            for layer in self.same:
                y = layer(x).unsqueeze_(0)
            return y, self.act(x).unsqueeze_(0)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_layer_result_shape_inplace_in_graph(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "branch = conv(x).unsqueeze(" in code, code
    assert "weights.append(head(pooled).unsqueeze(1))" in code, code
    assert "z = self.proj(pooled).unsqueeze(" in code, code
    x = np.random.default_rng(11).standard_normal((2, 4, 8, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Branches", [x], tmp_path, "branches53", mode, rtol=1e-5, atol=1e-5)


def test_layer_that_may_give_its_input_keeps_the_runtime():
    code = convert_source(KEEPS).code
    assert "mp_inplace.unsqueeze_(layer(x)" in code, code
    assert "mp_inplace.unsqueeze_(self.act(x)" in code, code
