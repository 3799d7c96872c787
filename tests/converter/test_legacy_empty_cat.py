"""torch.cat skips a 1-D tensor of no elements: ``mg = torch.tensor([])`` grown by ``torch.cat((mg, y), dim=1)`` in a
loop (MICN's multi-scale merge), a ``self.memory = torch.Tensor()`` buffer grown in forward. MindSpore's Concat
refuses the rank mismatch ("element rank must be same"), so such a cat goes through ``mp_tensor.cat``, which skips
them as torch does; every other cat stays MindSpore's own ``ops.cat``."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Accumulate(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 4, 3, padding=1)
            self.memory = torch.Tensor()

        def forward(self, x):
            mg = torch.tensor([])
            for i in range(3):
                mg = torch.cat((mg, self.conv(x).unsqueeze(1)), dim=1)
            steps = torch.empty(0)
            steps = torch.cat([steps, x.mean((1, 2))])
            self.memory = torch.cat((self.memory, x.flatten()))
            both = torch.cat([x, x], 1)
            return mg.sum(1) + self.memory.sum() + steps.sum() + both.sum()
""")


def test_only_the_cats_that_may_meet_an_empty_tensor_use_the_runtime():
    code = convert_source(SOURCE).code
    assert code.count("mp_tensor.cat(") == 3, code
    assert "ops.cat([x, x], axis=1)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 4, 5)).astype(np.float32)
    source = SOURCE
    if mode == "graph":  # a graph keeps no state on self: the buffer's cat is the PyNative test's
        source = source.replace("self.memory = torch.cat((self.memory, x.flatten()))", "")
    assert_port_matches_in_mode(source, convert_source(source).code, "Accumulate", [x], tmp_path, "empty_cat", mode,
                                atol=1e-5)
