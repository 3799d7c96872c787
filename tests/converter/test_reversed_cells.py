"""Stages walked backwards (``for up in reversed(self.up)``), as U-Net decoders do: a static graph does not compile
``reversed`` over a CellList or runs the stages out of order; the converter loops over a reversed list copy, and the
port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Stage(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.norm = nn.GroupNorm(2, cin)
            self.proj = nn.Conv2d(cin, cout, 1)

        def forward(self, x):
            return self.proj(torch.relu(self.norm(x)))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ModuleList([Stage(8, 4), Stage(6, 8), Stage(4, 6)])
            self.heads = nn.ModuleList([nn.Conv2d(4, 4, 1), nn.Conv2d(4, 4, 3, padding=1)])

        def forward(self, x):
            for up in reversed(self.up):
                x = up(x)
            return torch.stack([head(x) for head in reversed(self.heads)])
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_stages_walked_backwards_match(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "for up in list(self.up)[::-1]:" in code and "for head in list(self.heads)[::-1]" in code
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "rev", mode, atol=1e-5)
