"""``lengths >> 2`` on a tensor (a convolutional subsampler's output lengths, sooftware's conformer): a MindSpore
Tensor has no shift operators (TypeError). The converter writes the mapped ``torch.bitwise_right_shift`` /
``bitwise_left_shift``; the port matches torch, in PyNative and compiled. ``dim >> 1`` on a parameter of
``__init__`` or of a helper stays a Python shift."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def halve(dim):
        return dim >> 1


    class Net(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.proj = nn.Linear(dim, halve(dim))
            self.wide = dim << 1

        def forward(self, x, lengths):
            out = (lengths >> 2) + ((lengths - 1) << 1)
            return self.proj(x) * self.wide, out
""")


def test_shifts_on_tensors_are_mapped_and_on_ints_kept():
    code = convert_source(SOURCE).code
    assert "out = (ops.bitwise_right_shift(lengths, 2)) + (ops.bitwise_left_shift((lengths - 1), 1))" in code
    assert "return dim >> 1" in code and "self.wide = dim << 1" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches(tmp_path, mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    lengths = np.array([17, 64, 5], np.int64)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Net", [x, lengths], tmp_path, "shift", mode,
                                atol=1e-5)
