"""A padding amount read from a constructor parameter the constructor has already handed to a torch layer as a size
(native_facts.NonNegativeFacts._sized_before, SIZED_LAYERS): akamaster's CIFAR ResNet (option-A shortcut) builds
``self.conv1 = nn.Conv2d(in_planes, planes, ...)`` and ``nn.BatchNorm2d(planes)``, then pads its shortcut by
``planes // 4`` channels on each side in a lambda. torch's build raises on a negative size ("Trying to create tensor
with negative dimension"), so the amount is non-negative and MindSpore's own ``ops.pad`` is right (the runtime pad
exists for negative amounts, which ops.pad gets wrong). It was mp_F.pad. A parameter no layer took, one bound again,
or one handed to a layer in a conditional expression keeps the runtime pad. Values against torch in PyNative and
GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
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
        def __init__(self, in_planes=4, planes=8):
            super().__init__()
            self.conv = nn.Conv2d(in_planes, planes, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(planes)
            if in_planes != planes:
                self.shortcut = LambdaLayer(lambda x: F.pad(x, (0, 0, 0, 0, planes // 4, planes // 4), "constant", 0))
            else:
                self.shortcut = LambdaLayer(lambda x: x)

        def forward(self, x):
            return self.bn(self.conv(x)) + self.shortcut(x)


    class Unsized(nn.Module):
        def __init__(self, planes=8):
            super().__init__()
            self.unsized = LambdaLayer(lambda x: F.pad(x, (0, 0, 0, 0, planes // 4, planes // 4)))


    class Rebound(nn.Module):
        def __init__(self, planes=8):
            super().__init__()
            self.conv = nn.Conv2d(4, planes, 3)
            planes = planes - 12
            self.rebound = LambdaLayer(lambda x: F.pad(x, (0, 0, 0, 0, planes // 4, planes // 4)))


    class Shadowed(nn.Module):
        def __init__(self, planes=8):
            super().__init__()
            self.conv = nn.Conv2d(4, planes, 3)
            self.shadowed = LambdaLayer(lambda x, planes=-8: F.pad(x, (0, 0, 0, 0, planes // 4, planes // 4)))


    class Conditional(nn.Module):
        def __init__(self, planes=8):
            super().__init__()
            self.conv = nn.Conv2d(4, planes, 3) if planes > 100 else None
            self.conditional = LambdaLayer(lambda x: F.pad(x, (0, 0, 0, 0, planes // 4, planes // 4)))
""")


def test_sized_parameter_pads_are_mindspores():
    code = convert_source(SOURCE).code
    block = code.split("class Block")[1].split("class Unsized")[0]
    assert "ops.pad(x, (0, 0, 0, 0, planes // 4, planes // 4)" in block and "mp_F.pad" not in block, code
    for name in ("Unsized", "Rebound", "Shadowed", "Conditional"):
        part = code.split(f"class {name}")[1].split("class ")[0]
        assert "mp_F.pad(x, (0, 0, 0, 0, planes // 4, planes // 4))" in part, (name, code)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sized_parameter_pads_match_torch(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Block", [x], tmp_path, "sized_pads", mode, atol=1e-5)
