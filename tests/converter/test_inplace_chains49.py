"""A chain of in-place updates as a statement (``x.mul_(2.0).add_(1.0)``, ``y.add_(1.0).clamp_(0, 5)``) rebinds its
innermost receiver to the outermost update, as a single update already did (TableCallTransform._rebound_update).
MindSpore 2.10's static graph does not order the runtime's write into a tensor that is no Parameter before later
reads of the name: GRAPH_MODE read the unwritten input after the line, different numbers from PyNative and torch
(found by the proof of a forward writing its own input, session 49). Each update returns its receiver in PyNative and
the value it wrote in a graph, so the rebinding changes nothing in PyNative. Real torch, real MindSpore."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Chains(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(6, 6, 3, padding=1)

        def forward(self, x):
            x.mul_(2.0).add_(1.0)
            y = self.conv(x)
            y.add_(1.0).clamp_(0.0, 2.5)
            return y + x
''')


def _code():
    result = convert_source(SOURCE)
    return getattr(result, "code", result)


def test_a_chain_of_updates_rebinds_its_innermost_receiver():
    code = _code()
    assert "x = mp_inplace.add_(mp_inplace.mul_(x, other=2.0), other=1.0)" in code
    assert "y = mp_inplace.clamp_(mp_inplace.add_(y, other=1.0)" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_chains_match_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 6, 7, 7)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, _code(), "Chains", [x], tmp_path, "chains49", mode, rtol=1e-5, atol=1e-5)
