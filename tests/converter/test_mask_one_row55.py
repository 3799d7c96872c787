"""An item write through a boolean mask whose value is one row broadcast to every masked row (``t[mask] = row``, row
of shape (C,) or (1, C), the mask over the leading axis): torch and PyNative fill each masked row with it; MindSpore
2.10's graph setitem failed ("x_shape: {3, 1}"). The runtime's graph setitem (runtime/numpy_ints.py) writes such a
value as a select over the mask broadcast to the data's shape. The converted model runs against torch in PyNative
and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class RowFill(nn.Module):
        def __init__(self, width=4):
            super().__init__()
            self.proj = nn.Linear(width, width)
            self.row = nn.Parameter(torch.linspace(-1.0, 1.0, width))

        def forward(self, x):
            y = self.proj(x)
            mask = y[:, 0] > 0
            y[mask] = self.row
            return y * 2 + 1
""")

SOURCE_KEEPDIM = SOURCE.replace("y[mask] = self.row", "y[mask] = self.row.unsqueeze(0)")


@pytest.mark.parametrize("source", [SOURCE, SOURCE_KEEPDIM], ids=["row", "row_1c"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_one_row_through_a_mask_matches_torch(mode, source, tmp_path):
    import mindport.runtime.containers  # noqa: F401 - the graph's setitem, as a port importing mindport's runtime has it

    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    assert_port_matches_in_mode(source, convert_source(source).code, "RowFill", [x], tmp_path, "mask_row55", mode)
