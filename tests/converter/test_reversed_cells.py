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


SKIPS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.ModuleList([nn.Conv1d(2, 4, 3, padding=1), nn.Conv1d(4, 6, 3, padding=1),
                                       nn.Conv1d(6, 8, 3, padding=1)])
            self.up = nn.ModuleList([nn.Conv1d(8, 6, 1), nn.Conv1d(6, 4, 1), nn.Conv1d(4, 2, 1)])

        def forward(self, x):
            skips = []
            for down in self.down:
                x = torch.tanh(down(x))
                skips.append(x)
            for up, skip in zip(self.up, reversed(skips)):
                x = up(x + skip)
            scales = [s.mean() for s in reversed(skips)]
            return x, torch.stack(scales)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_own_list_walked_backwards_beside_the_stages_matches(tmp_path, mode):
    """WaveGrad's decoder: ``zip(self.upsample, reversed(downsampled))`` over the skips forward collected did not
    compile in a graph (a convolution given another skip's channels)."""
    code = convert_source(SKIPS).code
    assert "zip(self.up, skips[::-1])" in code and "for s in skips[::-1]" in code
    x = np.random.default_rng(1).standard_normal((2, 2, 7)).astype(np.float32)
    assert_port_matches_in_mode(SKIPS, code, "Net", [x], tmp_path, "skips", mode, atol=1e-5)


WEIGHTED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            feats = []
            for i in range(3):
                x = torch.tanh(self.proj(x)) * (i + 1)
                feats.append(x)
            return sum([w * f for w, f in zip([1.0, 2.0, 3.0], reversed(feats))])
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_own_list_reversed_in_a_comprehension_gives_torchs_numbers(tmp_path, mode):
    """``[... for w, f in zip(ws, reversed(feats))]`` compiled in a graph to other numbers, with no error (max rel
    0.4 here): the list's reversed copy gives torch's."""
    code = convert_source(WEIGHTED).code
    assert "zip([1.0, 2.0, 3.0], feats[::-1])" in code
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(WEIGHTED, code, "Net", [x], tmp_path, "weighted", mode, atol=1e-5)


GIVEN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Fuse(nn.Module):
        def forward(self, feats):
            return sum([f.sum(dim=1) * (i + 1) for i, f in enumerate(reversed(feats))]) \\
                + sum([f.mean(dim=1) * 2 for f in reversed(feats)])


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.fuse = Fuse()

        def forward(self, x):
            h = self.proj(x)
            return self.fuse([h, torch.tanh(h), h * h])
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_given_list_reversed_in_a_comprehension_gives_torchs_numbers(tmp_path, mode):
    """A list handed to a layer (an FPN's levels) walked backwards in a comprehension: other numbers in a graph with
    no error, or no compile with ``enumerate``; ``list(feats)[::-1]`` gives torch's."""
    code = convert_source(GIVEN).code
    assert "enumerate(list(feats)[::-1])" in code and "for f in list(feats)[::-1]" in code
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    assert_port_matches_in_mode(GIVEN, code, "Net", [x], tmp_path, "given", mode, atol=1e-5)
