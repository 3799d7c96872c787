"""An in-place tensor method as a statement on a local name (EGNN's ``unsorted_segment_sum``: ``result =
data.new_full(...); result.scatter_add_(0, ids, data)``, then ``result / n``). In a compiled graph
(GRAPH_MODE) the runtime's update of a tensor that is no Parameter (``ops.assign``) is not ordered before later
reads of the name, which then read the old values: the port compiled and gave different numbers than in PyNative
without any error (EGNN 9.4e-3 off). The converter rebinds the name to the update's result."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def unsorted_segment_sum(data, segment_ids, num_segments, normalization_factor):
        result = data.new_full((num_segments, data.size(1)), 0)
        segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
        result.scatter_add_(0, segment_ids, data)
        result = result / normalization_factor
        return result


    class Aggregate(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, data, ids):
            h = self.fc(data)
            h.mul_(2.0)
            for _ in range(2):
                h.add_(1.0)
            return unsorted_segment_sum(h, ids, 3, 4.0)
""")


def test_an_inplace_statement_on_a_local_name_rebinds_it():
    code = convert_source(SOURCE).code
    # result is bound only to a new tensor: the out-of-place call, cast back to its dtype (native57's
    # TableCallTransform._unaliased_update for in-place entries without keeps_dtype)
    assert "result = mp_math.scatter_add(result, dim=0, index=segment_ids, src=data).astype(result.dtype)" in code
    assert "h = mp_inplace.mul_(h, other=2.0)" in code and "h = mp_inplace.add_(h, other=1.0)" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_inplace_statements_match_torch_in_both_modes(tmp_path, mode):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((8, 4)).astype(np.float32)
    ids = np.array([0, 1, 2, 0, 1, 2, 0, 0], np.int64)  # repeated indices, as a graph's edges have
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Aggregate", [data, ids], tmp_path, "segsum",
                                mode, atol=1e-5)
