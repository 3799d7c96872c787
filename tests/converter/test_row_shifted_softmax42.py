"""A softmax whose input is its scores less their own row maximum (``sim - sim.amax(dim=-1, keepdim=True)``, the
stable-softmax idiom of lucidrains' CoCa, optionally ``.detach()``-ed, ``torch.amax``, ``.max(dim, keepdim=True)
.values`` / ``[0]``) over the dim the softmax reduces can hold no row of all -inf, whatever the scores hold: a row whose
maximum is finite holds a 0 at that maximum, a row of all -inf becomes NaN (-inf - -inf). MindSpore's own
``ops.softmax`` gives torch's values there (the runtime softmax exists for MindSpore 2.10's CPU kernel defect on a row
of all -inf: native_facts.UnmaskedFacts._row_shifted). CoCa's two attentions were mp_F.softmax. A maximum over another
dim, of another tensor, or without keepdim keeps the runtime's. The converted module runs against torch in PyNative
and GRAPH_MODE, on scores holding a row of all -inf and rows with some -inf."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    from torch import einsum


    class Shifted(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.q = nn.Linear(d, d)
            self.k = nn.Linear(d, d)

        def forward(self, x, mask, scores):
            sim = einsum('b i d, b j d -> b i j', self.q(x), self.k(x))
            sim = sim.masked_fill(mask, -torch.finfo(sim.dtype).max)
            sim = sim - sim.amax(dim=-1, keepdim=True).detach()
            a = sim.softmax(dim=-1)
            b = torch.softmax(scores - scores.amax(dim=-1, keepdim=True), dim=-1)
            c = (scores - scores.max(dim=-1, keepdim=True).values).softmax(dim=-1)
            d = (scores - torch.amax(scores, -1, keepdim=True)).softmax(-1)
            s = scores - scores.max(-1, keepdim=True)[0]
            e = s.softmax(dim=-1)
            f = (scores - scores.amax(dim=1, keepdim=True)).softmax(dim=-1)
            g = (scores - sim.amax(dim=-1, keepdim=True)).softmax(dim=-1)
            t = scores - scores.amax(dim=-1, keepdim=True)
            t = t.transpose(1, 2)
            h = t.softmax(dim=-1)
            return a, b, c, d, e, f, g, h
""")


def test_row_shifted_scores_are_mindspores_softmax():
    code = convert_source(SOURCE).code
    assert "a = ops.softmax(sim, axis=-1)" in code, code
    assert "b = ops.softmax(" in code and "c = ops.softmax(" in code and "d = ops.softmax(" in code, code
    assert "e = ops.softmax(s, axis=-1)" in code, code
    assert "f = mp_F.softmax(" in code, code  # the maximum over another dim: a row may stay all -inf
    assert "g = mp_F.softmax(" in code, code  # another tensor's maximum
    assert "h = mp_F.softmax(t, dim=-1)" in code, code  # moved after the shift: its rows are the old columns


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_row_shifted_softmaxes_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.zeros((2, 5, 5), bool)
    mask[0, 1] = True  # a fully masked row (a finite fill)
    mask[1, :, 3] = True
    scores = rng.standard_normal((2, 5, 5)).astype(np.float32)
    scores[0, 2] = -np.inf  # a row of all -inf: NaN after the shift, in torch and in the port
    scores[1, 0, :3] = -np.inf
    scores[1, :, 4] = -np.inf  # a column of all -inf: h's softmax meets a row of all -inf
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Shifted", [x, mask, scores], tmp_path, "shifted", mode,
                                rtol=1e-5, atol=1e-6)
