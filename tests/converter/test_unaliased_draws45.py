"""An in-place Bernoulli fill called as a statement on a local name whose tensor nothing else holds
(TableCallTransform._unaliased_draw, UNALIASED_DRAWS; native_facts.unaliased_local_update decides the aliasing):
kuangliu/pytorch-cifar's EfficientNet drop_connect (``mask = torch.empty([n, 1, 1, 1], dtype=x.dtype);
mask.bernoulli_(keep_ratio)``) was ``mask = mp_inplace.bernoulli_(mask, p=keep_ratio)``, the runtime writing its draw
into an object no one else held. It is now ``mask = (ops.rand_like(mask, dtype=ms.float32) < keep_ratio).astype(
mask.dtype)``, MindSpore's own ops for every receiver dtype (ops.bernoulli refuses float16/bfloat16 receivers). An
aliased mask, a fill whose result is read, a ``generator=`` keep the runtime's.

The draws are random: the values are checked against torch where the probability makes them certain (1.0 gives
ones, 0.0 zeros, in the receiver's dtype: float32 and int64), in PyNative and GRAPH_MODE, and the frequency of ones
against p otherwise."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def drop_mask(x, keep):
        mask = torch.empty([x.shape[0], 1, 1], dtype=x.dtype, device=x.device)
        mask.bernoulli_(keep)
        return mask


    def int_mask(x, keep):
        mask = torch.zeros(x.shape[0], 2, dtype=torch.long)
        mask.bernoulli_(p=keep)
        return mask


    class Masks(nn.Module):
        def forward(self, x):
            ones = x * drop_mask(x, 1.0)
            zeros = x * drop_mask(x, 0.0)
            return ones, zeros, int_mask(x, 1.0), int_mask(x, 0.0)


    class Frequency(nn.Module):
        def forward(self, x):
            mask = torch.zeros_like(x)
            mask.bernoulli_(0.3)
            return mask


    def aliased(x, keep):
        mask = torch.empty([x.shape[0], 1, 1], dtype=x.dtype)
        kept = mask
        mask.bernoulli_(keep)
        return kept


    def read(x, keep):
        mask = torch.empty([x.shape[0], 1, 1], dtype=x.dtype)
        return mask.bernoulli_(keep)
""")


def test_unaliased_bernoulli_fills_are_mindspores():
    code = convert_source(SOURCE).code
    assert "mask = (ops.rand_like(mask, dtype=ms.float32) < keep).astype(mask.dtype)" in code, code
    assert "mask = (ops.rand_like(mask, dtype=ms.float32) < 0.3).astype(mask.dtype)" in code, code
    assert "mask = mp_inplace.bernoulli_(mask, p=keep)" in code, code  # aliased (kept = mask): the runtime's
    assert "return mp_inplace.bernoulli_(mask, p=keep)" in code, code  # the result is read: the runtime's
    assert code.count("ops.rand_like(mask, dtype=ms.float32)") == 3, code  # drop_mask, int_mask, Frequency


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_certain_bernoulli_fills_match_torch(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Masks", [x], tmp_path, "unaliased_draws", mode)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_bernoulli_fill_frequency_and_dtype(mode, tmp_path):
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        net = load_module(convert_source(SOURCE).code, tmp_path / f"m_freq_{mode}.py", f"m_freq_{mode}").Frequency()
        out = net(ms.Tensor(np.zeros((200, 100), np.float32)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    values = out.asnumpy()
    assert out.dtype == ms.float32 and values.shape == (200, 100)
    assert set(np.unique(values)) <= {0.0, 1.0}
    assert abs(values.mean() - 0.3) < 0.02, values.mean()
