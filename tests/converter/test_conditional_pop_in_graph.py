"""``y = xs.pop(0) if xs else None`` in a model's method compiles in GRAPH_MODE and gives torch's numbers. A graph
gave the conditional expression's pop as the (list, item) pair, so x-transformers' ``layer_mem = mems.pop(0) if mems
else None`` handed a layer a tuple ("'Tuple' object has no attribute 'ndim'", 3 trials entries; pure MindSpore:
"Failed calling Shape with input_x=Tuple[List[None],None]"). ListPopTransform writes it as an ``if`` statement.
The slice: a list of Nones the method builds (x-transformers' memories), a list of tensors popped from the front and
from the end under a condition that turns false part-way. Expected values are torch's own outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

POPS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def exists(v):
        return v is not None


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.d = nn.Linear(4, 4)
            self.e = nn.Linear(4, 4)

        def forward(self, x, mems=None):
            mems = mems.copy() if exists(mems) else [None] * 2
            feats = [x * 2, x + 1]
            outs = []
            for i in range(3):
                layer_mem = mems.pop(0) if mems else None
                if exists(layer_mem):
                    x = x + self.d(layer_mem)
                first = feats.pop(0) if feats else x
                last = feats.pop() if len(feats) > 0 else first
                x = self.e(x) + first - last
                outs.append(x)
            return torch.stack(outs)
""")


def test_the_conditional_pops_are_statements():
    code = convert_source(POPS).code
    assert ".pop(" not in code, code
    assert "if mems:\n" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_conditional_pops_match_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(POPS, convert_source(POPS).code, "Net", [x], tmp_path, "pops", mode, atol=1e-5)
