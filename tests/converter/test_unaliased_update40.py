"""An in-place method called as a statement on a local name whose tensor nothing else holds (sooftware/attentions'
``score.masked_fill_(mask.view(score.size()), -float('Inf'))`` after ``score = torch.bmm(q, k.transpose(1, 2)) /
math.sqrt(d)``) is ``score = score.masked_fill(...)``, MindSpore's own method (TableCallTransform._unaliased_update,
native_facts.unaliased_local_update): the runtime's write-back into the object serves other holders of it, and
there are none. A name aliased before the update (``alias = kept``), a parameter (the caller's tensor) keep the
runtime's; an update in a loop whose reads in the loop keep no reference (``step``, rebound to a new tensor each pass,
read as an operand) is rebound too (session 53: test_shape_inplace_rebound53.py). The converted module runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import math
    import torch
    import torch.nn as nn


    class Masked(nn.Module):
        def forward(self, q, k, mask):
            score = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
            if mask is not None:
                score.masked_fill_(mask.view(score.size()), -1e9)
            kept = q * 2
            alias = kept
            kept.masked_fill_(q > 0, 0.0)
            total = q * 0
            for i in range(2):
                step = total + i
                step.masked_fill_(q > 0.5, 5.0)
                total = total + step
            return score.softmax(-1), alias, total


    def clip(x):
        x.masked_fill_(x < -1, -1.0)
        return x
""")


def test_an_unaliased_local_is_rebound_and_the_others_stay():
    code = convert_source(SOURCE).code
    assert "score = score.masked_fill(" in code, code
    assert "kept = mp_inplace.masked_fill_(kept" in code and "step = step.masked_fill(" in code, code
    assert "x = mp_inplace.masked_fill_(x," in code, code
    assert code.count("mp_inplace.masked_fill_(") == 2, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_unaliased_updates_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 3, 4)).astype(np.float32)
    k = rng.standard_normal((2, 5, 4)).astype(np.float32)
    mask = np.zeros((2, 15), bool)
    mask[:, ::4] = True
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Masked", [q, k, mask], tmp_path, "unaliased", mode)
