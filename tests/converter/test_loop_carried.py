"""A name a loop body reads before binding it, kept from the iteration before (batch 7 CurveNet's walk: ``if step !=
0: ... cur_feature ...`` above ``cur_feature = ...``): GRAPH_MODE refused it ("The name 'cur_feature' is not
defined"); BranchBindingTransform binds it to None before the loop, and the port matches torch in PyNative and
compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Walk(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = nn.Linear(8, 4)

        def forward(self, x):
            for step in range(3):
                if step == 0:
                    pre = x
                else:
                    pre = self.mlp(torch.cat((cur, pre), dim=-1))
                cur = torch.tanh(pre * 2)
                if step != 0:
                    cur = cur + cur_old
                cur_old = cur
            return cur
""")


def test_carried_names_bound_before_the_loop():
    code = convert_source(SOURCE).code
    head = code[:code.index("for step in range(3)")]
    assert all(f"{name} = None" in head for name in ("cur", "cur_old", "pre"))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_loop_carried_names_match(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Walk", [x], tmp_path, "carried", mode, atol=1e-5)
