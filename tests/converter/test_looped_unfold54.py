"""torch.nn.Unfold held in a ModuleList display appended to ``self.NAME`` and called as a member of a
tuple-unpacked loop over it (rules/unfold_layers.py, _looped_unfolds): lucidrains' segformer builds its MiT stages
with ``unfold = nn.Unfold(...)``, ``stages.append(nn.ModuleList([unfold, conv, layers]))`` and runs them as
``for (unfold, conv, layers) in self.stages: x = unfold(x); ...; x = rearrange(x, 'b c (h w) -> b c h w', ...)``.
The loop's next use of the Unfold's output is an einops function whose pattern takes exactly three axes, reached
from the call with no other read of it than ``.shape`` and no rebinding: an unbatched input gives two axes and raises
there, so torch only ever ran the Unfold on a batch and MindSpore's own ``ops.unfold`` gives its values (it was
mp_nn.Unfold, whose only decision is torch's unbatched input). A loop that reads the output otherwise before the
rearrange, or a list read another way, keeps the runtime layer. Values against torch in PyNative and
GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    from math import sqrt

    import torch
    import torch.nn as nn
    from einops import rearrange


    class Pyramid(nn.Module):
        def __init__(self, channels=3, widths=(8, 12), kernels=((3, 2, 1), (3, 2, 1))):
            super().__init__()
            self.levels = nn.ModuleList([])
            width_in = channels
            for width, (kernel, stride, padding) in zip(widths, kernels):
                patches = nn.Unfold(kernel, stride=stride, padding=padding)
                mix = nn.Conv2d(width_in * kernel ** 2, width, 1)
                self.levels.append(nn.ModuleList([patches, mix, nn.GELU()]))
                width_in = width

        def forward(self, x):
            height, width = x.shape[-2:]
            for (patches, mix, act) in self.levels:
                x = patches(x)
                count = x.shape[-1]
                scale = int(sqrt(height * width / count))
                x = rearrange(x, 'b c (h w) -> b c h w', h=height // scale)
                x = act(mix(x))
            return x


    class Direct(nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = nn.ModuleList([])
            self.steps.append(nn.ModuleList([nn.Unfold(2, stride=2), nn.Identity()]))

        def forward(self, x):
            for (patches, keep) in self.steps:
                x = keep(rearrange(patches(x), 'b c n -> b n c'))
            return x


    class ReadFirst(nn.Module):
        def __init__(self):
            super().__init__()
            self.tiers = nn.ModuleList([])
            self.tiers.append(nn.ModuleList([nn.Unfold(2, stride=2), nn.Identity()]))

        def forward(self, x):
            for (patches, keep) in self.tiers:
                x = patches(x)
                y = x.sum()
                x = rearrange(x, 'b c n -> b n c')
            return x + y


    class Indexed(nn.Module):
        def __init__(self):
            super().__init__()
            self.rungs = nn.ModuleList([])
            self.rungs.append(nn.ModuleList([nn.Unfold(2, stride=2), nn.Identity()]))

        def forward(self, x):
            for (patches, keep) in self.rungs:
                x = patches(x)
                x = rearrange(x, 'b c n -> b n c')
            return self.rungs[0][0](x[0])
""")


def test_looped_unfold_is_mindspores():
    code = convert_source(SOURCE).code
    pyramid = code.split("class Pyramid")[1].split("class Direct")[0]
    assert "patches = Unfold1(kernel, stride=stride, padding=padding)" in pyramid, code
    assert "mp_nn.Unfold" not in pyramid, code
    direct = code.split("class Direct")[1].split("class ReadFirst")[0]
    assert "Unfold1(2, stride=2)" in direct, code  # the Unfold's call is the rearrange's argument
    read_first = code.split("class ReadFirst")[1].split("class Indexed")[0]
    assert "mp_nn.Unfold(kernel_size=2, stride=2)" in read_first, code  # its output read before the rearrange
    indexed = code.split("class Indexed")[1]
    assert "mp_nn.Unfold(kernel_size=2, stride=2)" in indexed, code  # the list is read another way


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_looped_unfold_matches_torch(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Pyramid", [x], tmp_path, "looped_unfold", mode, atol=1e-5)
