"""AugAssignRebindTransform: a whole-tensor ``x += e`` before item writes of ``x`` in a model method is rebound
(``x = x + e``): MindSpore 2.10's GRAPH_MODE silently lost an item write after it (lucidrains' Swin window
attention, 0.3 off). Expected values come from torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

WINDOW = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Window(nn.Module):
        def __init__(self, n=9):
            super().__init__()
            self.pos = nn.Parameter(torch.randn(n, n))
            self.register_buffer("upper", torch.arange(n) * 3.0)
            self.register_buffer("lower", torch.arange(n) * -2.0 + 1)

        def forward(self, q):
            k = q.shape[2] // 2
            dots = torch.einsum("bhid,bhjd->bhij", q, q) * 0.5
            dots += self.pos
            dots[:, :, -k:] += self.upper
            dots[:, :, k - 1::k] += self.lower
            scale = 1.0
            scale *= 2.0
            return dots.softmax(dim=-1) * scale


    class Lists(nn.Module):
        def forward(self, x):
            outs = [x]
            outs += [x * 2]
            outs[0] = x * 3
            return torch.cat(outs, -1)
""")


def test_the_whole_tensor_update_before_item_writes_is_rebound():
    code = convert_source(WINDOW).code
    assert "dots = dots + self.pos\n" in code
    assert "dots[:, :, -k:] += self.upper" in code  # the item writes stay
    assert "scale *= 2.0" in code  # no item write of scale: left
    assert "outs += [x * 2]" in code  # a list display: a list's += extends in place


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_window_attention_matches_torch(tmp_path, mode):
    code = convert_source(WINDOW).code
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 4)).astype(np.float32)
    assert_port_matches_in_mode(WINDOW, code, "Window", [x], tmp_path, "aug_window", mode, atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_lists_match_torch(tmp_path, mode):
    code = convert_source(WINDOW).code
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(WINDOW, code, "Lists", [x], tmp_path, "aug_lists", mode)


def test_mindspore_iadd_rebinds_in_pynative():
    """The fact the rule rests on: in PyNative, MindSpore's ``x += e`` binds a new tensor (another name keeps the old
    one), so ``x = x + e`` is the same program there."""
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE)
    a = ms.Tensor(np.zeros(3, np.float32))
    b = a
    a += 1
    np.testing.assert_array_equal(b.asnumpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(a.asnumpy(), np.ones(3, np.float32))
