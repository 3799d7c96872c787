"""More inputs of a softmax that can hold no row of all -inf (native_facts.UnmaskedFacts), so MindSpore's own
``ops.softmax`` serves (the runtime softmax exists for MindSpore 2.10's CPU kernel defect on such a row): zeros or ones
(``x.new_zeros(...)``, ``torch.zeros``), ``torch.cat`` of a display of such values (every row of a cat is a row of one
member or a run of members' rows), and a matrix product whose operand is a sum of names (``(query + self.u_bias) @ key``:
an operand, not a masking of the scores). sooftware/attentions' RelativeMultiHeadAttention (Transformer-XL's relative
positions: ``torch.cat([pos_score.new_zeros(...), pos_score], dim=-1)`` in an own method that rebinds its parameter,
``pos_score = padded[:, :, 1:].view_as(pos_score)``: every value it takes is such a value) was mp_F.softmax. A cat with
a parameter member and a stack keep the runtime's. The converted module runs against torch in PyNative and
GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Relative(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.q = nn.Linear(d, d)
            self.k = nn.Linear(d, d)
            self.u_bias = nn.Parameter(torch.randn(d))
            self.register_buffer("pad", torch.zeros(5, 5))

        def shift(self, pos_score):
            b, i, j = pos_score.size()
            zeros = pos_score.new_zeros(b, i, 1)
            padded = torch.cat([zeros, pos_score], dim=-1)
            padded = padded.view(b, j + 1, i)
            pos_score = padded[:, 1:].view_as(pos_score)
            return pos_score

        def swap(self, s):
            s = s * 0.5 + self.pad
            return s

        def forward(self, x, mask, extra):
            query, key = self.q(x), self.k(x)
            score = torch.matmul(query + self.u_bias, key.transpose(1, 2))
            pos = self.shift(torch.matmul(query, key.transpose(1, 2)))
            score = (score + pos) / 3.0
            score = score.masked_fill(mask, -1e9)
            a = torch.softmax(score, dim=-1)
            b = torch.softmax(torch.cat([score, torch.zeros(2, 5, 1)], dim=-1), dim=-1)
            c = torch.softmax(torch.cat([score, extra], dim=-1), dim=-1)
            d = torch.softmax(torch.stack([score, score * 2], dim=-1), dim=-1)
            e = torch.softmax((score + self.pad) * 0.5, dim=-1)
            f = torch.softmax((query + self.u_bias) @ key.transpose(1, 2), dim=-1)
            g = torch.softmax(self.swap(score), dim=-1)
            return a, b, c, d, e, f, g
""")


def test_zeros_and_cats_of_unmasked_values_are_mindspores_softmax():
    code = convert_source(SOURCE).code
    assert "a = ops.softmax(score, axis=-1)" in code, code
    assert "b = ops.softmax(ops.cat(" in code, code
    assert "c = mp_F.softmax(ops.cat(" in code and "d = mp_F.softmax(ops.stack(" in code, code
    assert "e = mp_F.softmax(" in code, code  # a buffer added to the scores may mask whole rows: a product of it too
    assert "f = ops.softmax(" in code, code
    assert "g = mp_F.softmax(self.swap(score)" in code, code  # a parameter rebound to a sum with a buffer


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_unmasked_softmaxes_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.zeros((2, 5, 5), bool)
    mask[0, 1] = True  # a fully masked row (a finite fill)
    mask[1, :, 3] = True
    extra = rng.standard_normal((2, 5, 2)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Relative", [x, mask, extra], tmp_path, "unmasked", mode,
                                rtol=1e-5, atol=1e-6)
