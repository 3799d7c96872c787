"""A padding amount ``a - b`` read in the body of ``if a > b:`` (``>=``, ``b < a``, ``b <= a``; ``b`` a name or an
integer literal) is non-negative there (native_facts.NonNegativeFacts, _checked_differences), as a name read in ``if n
> 0:`` already was, when neither name is rebound in that body and each is bound once: x-transformers' selective
attention ``if j > i: eye = F.pad(eye, (j - i, 0), value = 1.)`` is MindSpore's own ``ops.pad`` (the runtime pad crops
a negative amount by slicing, MindSpore 2.10's ops.pad being wrong for one). The reversed difference, or a name
rebound in the body, keeps the runtime's (``i, j, device = *sim.shape[-2:], sim.device`` is one assignment of each). The converted module runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Pads(nn.Module):
        def forward(self, x):
            i, j, n = *x.shape[-2:], x.shape[0]
            eye = torch.eye(i)
            if j > i:
                eye = F.pad(eye, (j - i, 0), value=1.)
            y = x
            if i >= 2:
                y = F.pad(x, (0, 0, 0, i - 2))
            z = x
            if j > i:
                z = F.pad(x, (i - j, 0))
            return eye, y, z


    class Rebound(nn.Module):
        def forward(self, x):
            i, j = x.shape[-2:]
            w = x
            if j > i:
                i = i + 1
                w = F.pad(x, (j - i, 0))
            return w
""")


def test_guarded_differences_are_mindspores_pad():
    code = convert_source(SOURCE).code
    assert "eye = ops.pad(eye, (j - i, 0), value=1.)" in code, code
    assert "y = ops.pad(x, (0, 0, 0, i - 2))" in code, code
    assert "z = mp_F.pad(x, (i - j, 0))" in code, code  # the reversed difference: a crop
    assert "w = mp_F.pad(x, (j - i, 0))" in code, code  # i rebound in the body


@pytest.mark.parametrize("cls", ["Pads", "Rebound"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_guarded_pads_match_torch(mode, cls, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"guarded_{cls}", mode)
