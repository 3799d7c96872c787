"""``torch.max``/``torch.min`` of a bool tensor compile in GRAPH_MODE. ``mp_tensor.max`` reduced a bool input by
calling ``max`` again by name (as uint8), and graph code reads ``max`` as Python's builtin: the graph compiled
builtin max(a, b, c) ("The parameters number of the function is 2, but the number of provided arguments is 3"; met
in NCRF++'s CRF Viterbi decode, ``torch.max(cur_values, 1)`` in a loop over a tensor's rows, where the graph compiled
the bool branch). Both now reduce through helpers of their own. The slice: the function and method forms, with a dim
(values and indices) and without, on bool inputs (the branch that recursed), in both modes (float inputs are the
mapping entries' proofs). Expected values are torch's own outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

BOOLS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def forward(self, x):
            mask = x > 0
            values, indices = torch.max(mask, 1)
            least, where = mask.min(dim=0)
            return values, indices, least, where, torch.max(mask), torch.min(mask)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_bool_max_and_min_match_torch(tmp_path, mode):
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(BOOLS, convert_source(BOOLS).code, "Net", [x], tmp_path, "bools", mode)
