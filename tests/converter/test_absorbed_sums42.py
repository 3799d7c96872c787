"""A sum or mean whose value over an empty extent nothing can read is MindSpore's own (native_facts.absorbed_reduction,
NATIVE_ABSORBED): now also a sum (``mindport.runtime.math.sum`` only replaces that value with torch's 0), a reduction
over one dim whose axis ``.unsqueeze`` puts back at once (``x.sum(dim=-1).unsqueeze(dim=-1)`` is the keepdim=True
reduction: the same axis for any int dim), and ``torch.div``/``mul``/``add``/``sub`` of two tensors as the
broadcasting operation with the reduced name. sooftware/attentions' location-aware smoothing ``torch.div(score,
torch.sum(score, dim=-1).unsqueeze(dim=-1))`` was mp_math.sum in its six ports. Where the extent is 0 the reduced name
has no element, nor has the broadcast, so the reduction's value is never read; a numpy receiver is not met there
(numpy's reductions take ``keepdims`` and give arrays without ``unsqueeze``). Another axis put back, or a reduction read
alone, keeps the runtime's. The converted modules run against torch in PyNative and GRAPH_MODE, on empty extents
too."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Norms(nn.Module):
        def forward(self, score, x):
            a = torch.div(score, torch.sum(score, dim=-1).unsqueeze(dim=-1))
            b = score / score.sum(dim=1, keepdim=True)
            c = x - x.mean(-1).unsqueeze(-1)
            d = score / score.sum(dim=-1).unsqueeze(1)
            e = score.sum(dim=-1)
            return a, b, c, d, e


    class Empty(nn.Module):
        def forward(self, score, x):
            a = torch.div(score, torch.sum(score, dim=-1).unsqueeze(dim=-1))
            b = score / score.sum(dim=-1, keepdim=True)
            c = x - x.mean(-1).unsqueeze(-1)
            return a, b, c
""")


def test_absorbed_sums_are_mindspores():
    code = convert_source(SOURCE).code
    assert "a = ops.div(score, ops.sum(score, dim=-1).unsqueeze(dim=-1))" in code, code
    assert "b = score / ops.sum(score, dim=1, keepdim=True)" in code, code
    assert "c = x - ops.mean(x, axis=-1).unsqueeze(-1)" in code, code
    assert "d = score / mp_math.sum(score, dim=-1).unsqueeze(1)" in code, code  # another axis put back
    assert "e = mp_math.sum(score, dim=-1)" in code, code  # read alone: torch's 0 over an empty extent


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_absorbed_sums_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    score = rng.random((2, 5, 5)).astype(np.float32) + 0.1
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Norms", [score, x], tmp_path, "absorbed_sums", mode)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_absorbed_sums_over_empty_extents_match_torch(mode, tmp_path):
    score = np.zeros((2, 5, 0), np.float32)
    x = np.zeros((2, 3, 0), np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Empty", [score, x], tmp_path, "absorbed_sums_empty", mode)
