"""``out += identity`` of a local whose tensor nothing else holds (every binding a new tensor: a layer's output, an
in-place ReLU's on it, an arithmetic result; no earlier read keeps a reference) is ``out = out + identity``
(AugAssignRebindTransform, native_facts.unshared_augmented): MindSpore 2.10's GRAPH_MODE compiles ``+=`` as an
in-place add (the operand times 1, Add, Assign and the side-effect ordering: 4 kernels more per ResNet block than the
hand-written ``out + identity`` in benchmarks/native_bench.py), PyNative's already binds a new tensor. A parameter (the
caller's tensor), a name aliased (``kept = h``), handed to a list or viewed before the update, bound by a layer that
may give its input back (``nn.Identity``), and a class the file subclasses keep ``+=``. The converted module runs
against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            identity = x
            out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            out = self.conv2(out)
            out = self.bn2(out)
            out += identity
            out = self.relu(out)
            scaled = out * 2
            scaled *= 0.5
            kept = out * 3
            alias = kept
            kept += 1
            return out, scaled, kept, alias


    class Shared(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)
            self.skip = nn.Identity()

        def forward(self, x):
            out = self.bn2(self.conv2(x))
            feats = []
            listed = out - 1
            feats.append(listed)
            listed -= 2
            viewed = out + 2
            row = viewed[:, 0]
            viewed /= 2
            same = self.skip(out)
            same += 1
            x += 1
            return out, feats[0], listed, row, viewed, same, x
""")


def _lines(code):
    return [line.strip() for line in code.splitlines()]


def test_an_unshared_local_is_rebound_and_the_shared_ones_stay():
    lines = _lines(convert_source(SOURCE).code)
    assert "out = out + identity" in lines and "scaled = scaled * 0.5" in lines
    for kept in ("kept += 1", "listed -= 2", "viewed /= 2", "same += 1"):
        assert kept in lines, kept
    assert "x = mp_inplace.iadd(x, 1)" in lines  # the caller's tensor: AliasUpdateTransform's


def test_a_subclassed_class_keeps_the_update():
    source = SOURCE + "\n\nclass Wider(Block):\n    pass\n"  # a subclass may give bn2 another layer
    assert "out += identity" in _lines(convert_source(source).code)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_block_matches_torch(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Block", [x], tmp_path, "unshared_aug", mode, atol=1e-5)
