"""A name read in a loop or a branch of a top-level statement, or after one, is floating for the float facts when every
value that may reach the read is (native_facts.FlowFloats._reaching_float, _Order.reaching_values: the last top-level
binding before the statement and every binding from there to the statement's end, each a plain assignment; a read of
the name inside those values that the same values reach is taken as floating while they are checked). The facts read
such a name by every binding of the function before, or through a straight-line reaching binding only.
segment-anything's parameter rebound ``points = points + 0.5`` then ``if pad: points = torch.cat([points, padding_point], dim=1)`` is
ops.cat without mp_tensor.promoted; x-transformers' ``pos = torch.sign(pos) * torch.log(pos.abs() + 1)`` in an ``if``
after ``pos = torch.arange(...).float()`` loses the int-to-float guard of its log. A binding in a branch that may leave
an integer keeps the runtime's. The converted modules run against torch in PyNative and GRAPH_MODE, both branches."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Join(nn.Module):
        def __init__(self, pad=True):
            super().__init__()
            self.pad = pad
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            x = x + 0.5
            if self.pad:
                zeros = torch.zeros((x.shape[0], 1, 2))
                x = torch.cat([x, zeros], dim=1)
            h = torch.arange(3)
            h = self.fc(x)
            for _ in range(2):
                h = torch.cat([h, torch.ones((x.shape[0], 1, 2))], dim=1)[:, 1:]
            log = x
            if self.pad:
                log = torch.log(x.abs() + 1)
            points = x
            k = torch.arange(x.shape[1])
            if self.pad:
                k = k * 0.5
            m = torch.cat([k, torch.zeros(1)])
            return points, h, log, m


    class NoPad(Join):
        def __init__(self):
            super().__init__(pad=False)
""")


def test_values_reaching_a_read_in_a_branch_or_loop_are_floats():
    code = convert_source(SOURCE).code
    assert "x = ops.cat([x, zeros], axis=1)" in code, code
    assert "h = ops.cat([h, ops.ones((x.shape[0], 1, 2))], axis=1)[:, 1:]" in code, code
    assert "log = ops.log(" in code, code
    assert "m = ops.cat(mp_tensor.promoted([k, ops.zeros(1)]))" in code, code  # k may stay int64


@pytest.mark.parametrize("cls", ["Join", "NoPad"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_reaching_floats_match_torch(mode, cls, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 2)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"reaching_{cls}", mode)
