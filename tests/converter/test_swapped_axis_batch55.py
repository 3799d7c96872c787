"""A layer torch takes unbatched inputs for (Conv1d: mindport.mappings.unbatched) whose output is next swapped with
an axis the unbatched output lacks (sooftware/attentions' location energy ``self.conv1d(last_attn).transpose(1, 2)``,
``torch.transpose(self.conv1d(...), 1, 2)``: torch raises IndexError on the 2-D output of a (C, L) input) is called
on a batch in every program torch runs: the converted file builds MindSpore's own Conv1d without loading
mindport.runtime.unbatched (native_facts._BatchFlow.onward, _swaps_missing_axis). A swap of axes the unbatched
output has (``transpose(0, 1)``) proves nothing: the handling stays. The class: a rank fact given by a consumer's
literal axis. Converted modules run against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Loc(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 4, kernel_size=3, padding=1)
            self.conv2 = nn.Conv1d(1, 4, kernel_size=3, padding=1)
            self.proj = nn.Linear(4, 3)

        def forward(self, last):
            a = self.proj(self.conv(last).transpose(1, 2))
            b = torch.transpose(self.conv2(last[:, :1]), 2, 1)
            return a + self.proj(b)
""")

IN_RANGE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Loc(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 4, kernel_size=3, padding=1)

        def forward(self, last):
            return self.conv(last).transpose(0, 1)
""")


def test_a_swap_of_an_axis_the_unbatched_output_lacks_shows_the_batch():
    code = convert_source(SOURCE).code
    assert "a = self.proj(self.conv(last).swapaxes(axis0=1, axis1=2))" in code, code
    assert "b = ops.swapaxes(self.conv2(last[:, :1]), 2, 1)" in code, code
    assert "mindport" not in code, code
    assert "import mindport.runtime.unbatched" in convert_source(IN_RANGE).code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_swapped_axis_port_matches_torch(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 2, 5)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Loc", [x], tmp_path, "loc", mode, rtol=1e-5, atol=1e-5)
