"""Members appended to a ModuleList its owner already holds, when the first member is itself a sequence
(improved/guided-diffusion's ``input_blocks = nn.ModuleList([TimestepEmbedSequential(conv)])`` then
``.append(TimestepEmbedSequential(ResBlock(...)))``; graph20's open item): MindSpore's CellList names them by a prefix
it guesses from the first member's parameter names, wrong when that member's own first key is ``0`` again
(``input_blocks.0.1.0.in_layers.2.weight`` for torch's ``input_blocks.1.0.in_layers.2.weight``; a graph then refuses
duplicate names). Built in a local and assigned after the last add where __init__ allows, else the runtime's
ModuleList, which takes the prefix its owner gave it: every parameter is named by its path, as in torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Res(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.in_layers = nn.Sequential(nn.GroupNorm(1, c), nn.SiLU(), nn.Conv2d(c, c, 3, padding=1))

        def forward(self, x):
            return x + self.in_layers(x)


    class Seq(nn.Sequential):
        def forward(self, x):
            for layer in self:
                x = layer(x)
            return x


    class Net(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.input_blocks = nn.ModuleList([Seq(nn.Conv2d(c, c, 1))])
            for i in range(2):
                self.input_blocks.append(Seq(Res(c)))
            self.later = nn.ModuleList([Seq(nn.Conv2d(c, c, 1))]){call}

        def extend_later(self):
            self.later.append(Seq(Res(4)))

        def forward(self, x):
            for b in self.input_blocks:
                x = b(x)
            for b in self.later:
                x = b(x)
            return x
""")


@pytest.mark.parametrize("call", ["", "\n        self.extend_later()"], ids=["hoisted", "runtime"])
def test_members_appended_after_a_nested_first_member_are_named_by_their_path(call, tmp_path):
    source = SOURCE.replace("{call}", call)
    code = convert_source(source).code
    net = load_module(code, tmp_path / "m_names.py", f"m_names_{bool(call)}").Net()
    wrong = [(path, p.name) for path, p in net.parameters_and_names() if path != p.name]
    assert not wrong, wrong
    x = np.random.default_rng(5).standard_normal((2, 4, 5, 5)).astype(np.float32)
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, f"names_{bool(call)}", mode, atol=1e-5)
