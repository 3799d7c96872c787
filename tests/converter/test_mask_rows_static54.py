"""An item write through a boolean mask whose value holds the masked rows with a static count (LoRA's
``MergedLinear.zero_pad``: ``result = x.new_zeros((len(self.lora_ind), *x.shape[1:]))``, ``result[self.lora_ind] =
x``, x of 32 rows into 48): MindSpore 2.10's graph setitem broadcasts the value to the data's shape ("For
'BroadcastTo' ... x_shape: {32, 16}"); PyNative and torch fill the masked rows in order. The runtime's graph setitem
(runtime/numpy_ints.py) makes it a MaskedScatter when the static value does not broadcast to the data's shape, as it
did for a run-time row count. The converted model runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class Padded(nn.Module):
        def __init__(self, enable=(True, False, True), rows=4, width=3):
            super().__init__()
            self.proj = nn.Linear(width, width)
            self.ind = torch.zeros(len(enable) * rows, dtype=torch.bool).view(len(enable), -1)
            self.ind[list(enable)] = True
            self.ind = self.ind.view(-1)

        def zero_pad(self, x):
            result = x.new_zeros((len(self.ind), *x.shape[1:]))
            result[self.ind] = x
            return result

        def forward(self, x):
            return self.zero_pad(self.proj(x)) * 2 + 1
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_masked_rows_of_a_static_count_match_torch(mode, tmp_path):
    import mindport.runtime.containers  # noqa: F401 - the graph's setitem, as a port importing mindport's runtime has it

    x = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Padded", [x], tmp_path, "mask_rows54", mode)
