"""Lists gathered with ``extend`` in a sub-Cell, then a tuple unpacked in its caller (MegaCRN's AGCN and GRU gate):
MindSpore's static graph compiles ``list.extend`` and unpacks ``z, r = ops.split(...)`` wrong afterwards, silently
(``r`` becomes ``z[1]``); the converter re-binds the list to a concatenation, and the port matches torch in PyNative
and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Cheb(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.randn(12, 16) * 0.3)

        def forward(self, x, supports):
            support_set = []
            for support in supports:
                support_ks = [torch.eye(support.shape[0]), support]
                support_ks.append(2 * support @ support_ks[-1] - support_ks[-2])
                support_set.extend(support_ks)
            x_g = torch.cat([torch.einsum("nm,bmc->bnc", s, x) for s in support_set], dim=-1)
            return x_g @ self.weights


    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = Cheb()

        def forward(self, x, a, b):
            z_r = torch.sigmoid(self.gate(x, [a, b]))
            z, r = torch.split(z_r, 8, dim=-1)
            return z * x.sum(-1, keepdim=True), r
""")


def test_extend_becomes_a_concatenation():
    code = convert_source(SOURCE).code
    assert "support_set = support_set + list(support_ks)" in code and ".extend(" not in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_split_after_extend_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 2)).astype(np.float32)
    a, b = (rng.random((5, 5)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(SOURCE, code, "Gate", [x, a, b], tmp_path, "extend", mode, atol=1e-5)


def test_a_list_handed_over_is_left():
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x):
                kept = []
                self.cache = kept
                kept.extend([x, x])
                more = []
                more.extend(x, y=1) if x is not None else None
                return kept
    """)
    code = convert_source(source).code
    assert "kept.extend([x, x])" in code and "more.extend(x, y=1)" in code
