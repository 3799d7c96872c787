"""A join whose members all come from one tensor through dtype-keeping steps it did not follow before: arithmetic
with an integer literal (``3 * y - 1``, ``x ** 2``: a Python int never changes a tensor's dtype, but a bool one's),
``norm`` (a real float's dtype: torch refuses an integer input; a complex one's real norm joined to it is refused by
MindSpore's Concat loudly) and ``F.pad`` (the fill value is cast to the input's dtype), also when the name is rebound
between the member's binding and the join by such a step of itself (``x = F.pad(x, ...)``). The members have one
dtype, so MindSpore's own ``ops.cat`` serves (``mp_tensor.promoted`` before: x-transformers' l2-distance attention
``torch.cat((2 * q, q_norm_sq))``). ``x / 2`` (an integer ``x`` gives float) and a rebinding to a comparison keep
``mp_tensor.promoted``. The converted modules run against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Lifted(nn.Module):
        def forward(self, x, y):
            sq = x.norm(dim=-1, keepdim=True) ** 2
            x = F.pad(x, (1, 0), value=0.5)
            lifted = torch.cat((x, sq), dim=-1)
            y_len = torch.norm(y, dim=-1, keepdim=True)
            shifted = torch.cat((3 * y - 1, y_len), dim=-1)
            return lifted + 0.0, shifted


    class Halved(nn.Module):
        def forward(self, x):
            return torch.cat((x, x / 2), dim=-1)


    class Recast(nn.Module):
        def forward(self, x):
            size = x.norm(dim=-1, keepdim=True)
            x = x > 0
            return torch.cat((x, size), dim=-1)
""")


def test_literal_arithmetic_members_join_natively():
    code = convert_source(SOURCE).code
    assert "lifted = ops.cat((x, sq), axis=-1)" in code, code
    assert "shifted = ops.cat((3 * y - 1, y_len), axis=-1)" in code, code
    assert "ops.cat(mp_tensor.promoted((x, x / 2)), axis=-1)" in code, code
    assert "ops.cat(mp_tensor.promoted((x, size)), axis=-1)" in code, code


@pytest.mark.parametrize("cls, count", [("Lifted", 2), ("Halved", 1), ("Recast", 1)])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_literal_arithmetic_joins_match_torch(mode, cls, count, tmp_path):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 3, 5)).astype(np.float32) for _ in range(count)]
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, cls, inputs, tmp_path, f"literal_{cls}", mode, atol=1e-5)


BRANCHED = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Branched(nn.Module):
        def __init__(self, lift=True):
            super().__init__()
            self.lift = lift

        def forward(self, x, y):
            if self.lift:
                sq = x.norm(dim=-1, keepdim=True) ** 2
                x = F.pad(x, (0, 2), value=-1.0)
                x = torch.cat((x, sq), dim=-1)
                y_len = y.norm(dim=-1, keepdim=True)
                y = torch.cat((2 * y, y_len), dim=-1)
            return x, y


    class Looped(nn.Module):
        def forward(self, x):
            outs = []
            for k in range(2):
                x = torch.cat((x, x.norm(dim=-1, keepdim=True)), dim=-1)
                outs.append(torch.cat([x for x in (x, x)], dim=-1))
            return outs[-1]


    class Retyped(nn.Module):
        def forward(self, x):
            if x.shape[0] > 0:
                size = x.norm(dim=-1, keepdim=True)
                x = (x > 0).float() * 2
                x = torch.cat((x, size), dim=-1)
            return x
""")


def test_branch_bindings_join_natively():
    code = convert_source(BRANCHED).code
    assert "x = ops.cat((x, sq), axis=-1)" in code, code
    assert "y = ops.cat((2 * y, y_len), axis=-1)" in code, code
    assert "x = ops.cat((x, mp_math.norm(x, dim=-1, keepdim=True)), axis=-1)" in code, code
    assert "x = ops.cat(mp_tensor.promoted((x, size)), axis=-1)" in code, code


@pytest.mark.parametrize("cls, count", [("Branched", 2), ("Looped", 1), ("Retyped", 1)])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_branch_bindings_match_torch(mode, cls, count, tmp_path):
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(count)]
    code = convert_source(BRANCHED).code
    assert_port_matches_in_mode(BRANCHED, code, cls, inputs, tmp_path, f"branched_{cls}", mode, atol=1e-5)
