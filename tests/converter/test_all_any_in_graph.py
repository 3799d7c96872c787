"""``all``/``any`` of a comprehension, a generator or a ``map(lambda ...)`` in a model's ``forward`` compile in
GRAPH_MODE and give torch's numbers. MindSpore evaluates ``all``/``any`` as Python with their argument's source, and
a comprehension there sees none of the names it reads from outside itself: denoising-diffusion-pytorch's
``assert all([divisible_by(d, self.downsample_factor) for d in x.shape[-2:]])`` (trials ddpm_lucid/unet) stopped
with "NameError: name 'divisible_by' is not defined"; a local (``k``) or ``self`` failed the same way (MindSpore 2.10).
The runtime gives a graph its own ``all``/``any`` (mindport.runtime.graph_order), and a converted file that calls them
so in a ``construct`` imports it. The slice: the U-Net's assert (a module function, a property), a generator over a
local, tensor-valued items (a run-time answer, both ways), a list comprehension reading ``self``, a ``map`` over a
lambda, and an empty sequence; each guards a different change to the output, so a wrong answer shows in the numbers.
Expected values are torch's outputs, both modes."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

UNET = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def divisible_by(numer, denom):
        return (numer % denom) == 0


    class Unet(nn.Module):
        def __init__(self):
            super().__init__()
            self.downs = nn.ModuleList([nn.Conv2d(3, 3, 1), nn.Conv2d(3, 3, 1)])
            self.limit = 1e9

        @property
        def downsample_factor(self):
            return 2 ** (len(self.downs) - 1)

        def forward(self, x, y):
            assert all([divisible_by(d, self.downsample_factor) for d in x.shape[-2:]]), \\
                f'your input dimensions {x.shape[-2:]} need to be divisible by {self.downsample_factor}'
            k = 2
            if any(d % k == 1 for d in x.shape[-2:]):
                x = x * 10
            for conv in self.downs:
                x = conv(x)
            if all(t.sum() > -self.limit for t in (x, y)):
                x = x + 2
            if any([(t * k).mean() > self.limit for t in (x, y)]):
                x = x - 100
            if all(t.sum() > 0 for t in (x.abs() + 1, y.abs() - 1e6)):
                x = x * 7
            if any(t.sum() > 0 for t in (x.abs() - 1e6, y.abs() + 1)):
                x = x * 3
            if all(map(lambda d: d % k == 0, x.shape[-2:])):
                x = x + 5
            if any(d > k for d in ()):
                x = x * 0
            return x * y
""")


PLAIN = textwrap.dedent("""\
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 1)
            self.factor = 2

        def forward(self, x):
            assert all([d % self.factor == 0 for d in x.shape[-2:]])
            return self.conv(x)
""")


def test_import_added():
    """A file whose port needs no other runtime module imports the one giving a graph its ``all``/``any``."""
    code = convert_source(PLAIN).code
    assert "import mindport.runtime.graph_order" in code, code
    assert "assert all([d % self.factor == 0 for d in x.shape[-2:]])" in code, code
    assert "mindport" in convert_source(UNET).code


def test_plain_matches_torch_in_graph(tmp_path):
    x = np.random.default_rng(1).standard_normal((1, 3, 4, 4)).astype(np.float32)
    assert_port_matches_in_mode(PLAIN, convert_source(PLAIN).code, "Net", [x], tmp_path, "plain", "graph")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_unet_checks_match_torch(tmp_path, mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    y = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    assert_port_matches_in_mode(UNET, convert_source(UNET).code, "Unet", [x, y], tmp_path, "unet", mode,
                                rtol=1e-5, atol=1e-5)
