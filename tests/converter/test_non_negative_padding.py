"""A padding amount non-negative by construction is MindSpore's own pad (issue 30: native ports). The runtime pads
(``mp_F.pad``, ``mp_nn.ZeroPad2d``...) exist because MindSpore 2.10's ``ops.pad`` is wrong for a negative amount from
its second call in a process on (tests/converter/test_negative_padding.py); an amount that cannot be negative needs
none of that: a local bound only to a tuple of non-negative ints (ddim's and ldm's Downsample ``pad = (0, 1, 0, 1)``),
the sizes of a tensor (whisper's ``M, N = x.shape`` then ``F.pad(x, (0, M + 1))``), sums, products, floor divisions of
those, ``% n`` of a positive literal, ``max(0, ...)``, ``abs``, ``len`` (native_facts.NonNegativeFacts). A parameter,
an attribute, a subtraction, a local list, a local changed by ``-=`` keep the runtime pad. Expected values come from
torch; the fixture is written here."""
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


    def by_parameter(t, amount):
        return F.pad(t, (0, amount))


    def with_local_max(t):
        max = lambda a, b: -1
        return F.pad(t, (max(0, 2), 0))


    class Net(nn.Module):
        def __init__(self, k=-1):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 1)
            self.k = k
            pad = (1, 0, 1, 0)
            self.grow = nn.ZeroPad2d(pad)

        def forward(self, x):
            h = self.conv(x)
            pad = (0, 1, 0, 1)
            a = F.pad(h, pad, mode="constant", value=0)
            M, N = h.shape[-2:]
            b = F.pad(h, (0, M + 1))[..., :N]
            c = F.pad(h, (len(h) // 2, h.size(-1) % 3, max(0, M - 9), abs(N - 9)))
            n, *_ = h.shape
            n += 1
            d = F.pad(h, (n * 2, 0))
            e = F.pad(h, (self.k, 0))
            q = 2
            q -= 3
            f = F.pad(h, (0, q))
            lst = [0, 1]
            lst[0] = -1
            g = F.pad(h, lst)
            i = F.pad(h, (M - N, 0))
            j = by_parameter(h, -1) + with_local_max(h)
            return a, b, c, d, e, f, g, i, j, self.grow(h)
""")


def test_non_negative_amounts_are_mindspores_pad():
    code = convert_source(SOURCE).code
    assert 'a = ops.pad(h, pad, mode="constant", value=0)' in code, code
    assert "b = ops.pad(h, (0, M + 1))" in code, code
    assert "c = ops.pad(h, (len(h) // 2, h.shape[-1] % 3, max(0, M - 9), abs(N - 9)))" in code, code
    assert "self.grow = nn.ZeroPad2d(padding=pad)" in code, code


def test_amounts_that_may_be_negative_keep_the_cropping_pad():
    code = convert_source(SOURCE).code
    assert "mp_F.pad(t, (0, amount))" in code, code  # a parameter
    assert "mp_F.pad(t, (max(0, 2), 0))" in code, code  # a local named max
    assert "d = mp_F.pad(h, (n * 2, 0))" in code, code  # n, *_ = h.shape: a starred unpacking is not followed
    assert "e = mp_F.pad(h, (self.k, 0))" in code, code  # a constructor argument
    assert "f = mp_F.pad(h, (0, q))" in code, code  # q -= 3
    assert "g = mp_F.pad(h, lst)" in code, code  # a local list, changed in place
    assert "i = mp_F.pad(h, (M - N, 0))" in code, code  # a subtraction


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_padding_matches_torch_on_every_call(mode, tmp_path):
    import mindspore as ms

    ms.ops.pad(ms.Tensor(np.ones((2, 3), np.float32)), (0, -1))  # MindSpore's first negative pad is right
    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 5)).astype(np.float32)
    for call in range(2):
        assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, f"nonneg{call}", mode,
                                    rtol=1e-5, atol=1e-6)
