"""``self.children()`` / ``self.named_children()`` iterated in forward (pycls's ``for layer in self.children(): x =
layer(x)``): MindSpore 2.10's graph compiler crashes on ``self.cells()`` and ``self.name_cells()`` inside
construct ("The pointer[node] is null"); the converter writes the Cell's own ``_cells`` table, which compiles, with
torch's meaning (no None, each sub-module once)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch.nn as nn


    class Stem(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Linear(4, 6)
            self.act = nn.ReLU()
            self.out = nn.Linear(6, 3)
            self.skip = None

        def forward(self, x):
            for layer in self.children():
                x = layer(x)
            names = [name for name, _ in self.named_children()]
            return x * len(names)
""")

ALIASED = textwrap.dedent("""\
    import torch.nn as nn


    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.head = self.fc

        def forward(self, x):
            for layer in self.children():
                x = layer(x)
            return x
""")


def test_children_in_forward_are_the_cells_table():
    code = convert_source(SOURCE).code
    assert "for layer in [_cell for _cell in self._cells.values() if _cell is not None]:" in code
    assert "[(_name, _cell) for _name, _cell in self._cells.items() if _cell is not None]" in code
    # a sub-module under two names: torch lists it once, the table twice; the Cell's own cells() dedups as torch
    assert "for layer in self.cells():" in convert_source(ALIASED).code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_children_in_forward_match_torch_in_both_modes(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Stem", [x], tmp_path, "children", mode,
                                atol=1e-5)
