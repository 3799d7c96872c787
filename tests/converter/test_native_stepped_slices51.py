"""A stepped basic read (``x[:, :, ::2, ::2]``, ``x[..., 1::2, 1::2]``) whose items are slices, int literals,
``None`` and ``...`` (no bound read from data) is MindSpore's own subscripts (SliceGuardTransform, _stepped_last):
the bounds with steps of 1, then each stepped axis swapped to the last place, stepped after ``...`` and swapped back.
MindSpore 2.10's CPU StridedSliceGrad fails on a step after a kept axis ("N input memory out of bounds") but gets a
step on the last axis after ``...`` right; the runtime's ``mp_tensor.sliced`` (a gather) stays for bounds read from
data (an empty slice) and for indices that are names (a tensor or None at run time). The fixture (an option-A
shortcut of a CIFAR ResNet, a Focus-style space-to-depth, a 3-d middle-axis step and a mixed index) runs forward and
backward against torch in PyNative and GRAPH_MODE; before this change the file imported mindport.runtime.tensor and
every read went through ``sliced``."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Lambda(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x)


    class Strided(nn.Module):
        def __init__(self, planes=4):
            super().__init__()
            self.shortcut = Lambda(lambda x: F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes // 4, planes // 4),
                                                   "constant", 0))
            self.conv = nn.Conv2d(12, planes, 1)

        def forward(self, x):
            focus = torch.cat((x[..., 0::2, 0::2], x[..., 1::2, 0::2], x[..., 0::2, 1::2], x[..., 1::2, 1::2]), 1)
            rows = x.flatten(2)[:, 1::2]
            mixed = x[:, 0, 1:5:2, None, ::3]
            odd = x[:, 1:, 2:, 1::3]
            return self.shortcut(x), self.conv(focus), rows, mixed, odd
""")


def test_stepped_reads_are_mindspores_subscripts():
    code = convert_source(SOURCE).code
    assert "mp_tensor" not in code and "sliced" not in code, code
    assert "x[:, :, ::2, ::2]" not in code, code
    assert "x.swapaxes(2, -1)[..., ::2].swapaxes(2, -1).swapaxes(3, -1)[..., ::2].swapaxes(3, -1)" in code, code
    assert "x[..., 1:, 1:][..., ::2].swapaxes(-2, -1)[..., ::2].swapaxes(-2, -1)" in code, code
    assert "x[:, 0, 1:5, None, :].swapaxes(1, -1)[..., ::2].swapaxes(1, -1).swapaxes(3, -1)[..., ::3]" in code, code
    assert "odd = x[:, 1:, 2:, 1:].swapaxes(3, -1)[..., ::3].swapaxes(3, -1)" in code, code


def test_a_bound_read_from_data_keeps_the_runtime():
    source = textwrap.dedent("""
        import torch


        def margins(prods, y):
            return [torch.cat([prods[i, :yi], prods[i, yi + 1:]]) for i, yi in enumerate(y)], prods[:, ::2, ::2]


        def table(df):
            return df.iloc[:, ::2]
    """)
    code = convert_source(source).code
    assert code.count("mp_tensor.sliced(") == 3 and "prods.swapaxes(1, -1)" in code, code
    assert "mp_tensor.sliced(df.iloc, " in code, code  # no tensor, no name: its own subscript, at run time


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_stepped_reads_train_like_torch(mode, tmp_path):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = convert_source(SOURCE).code
    torch.manual_seed(0)
    t_net = load_module(SOURCE, tmp_path / "t_stepped.py", "t_stepped").Strided()
    m_net = load_module(code, tmp_path / f"m_stepped_{mode}.py", f"m_stepped_{mode}").Strided()
    transfer_weights(t_net.state_dict(), m_net)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8, 10)).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    outs = t_net(xt)
    weights = [rng.standard_normal(tuple(o.shape)).astype(np.float32) for o in outs]
    sum((o * torch.tensor(w)).sum() for o, w in zip(outs, weights)).backward()

    def loss(v):
        return sum((o * ms.Tensor(w)).sum() for o, w in zip(m_net(v), weights))

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = [o.asnumpy() for o in m_net(ms.Tensor(x))]
        grad_fn = ms.grad(loss) if mode == "pynative" else ms.jit(ms.grad(loss))
        grad = grad_fn(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for g, o in zip(got, outs):
        np.testing.assert_allclose(g, o.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, xt.grad.numpy(), rtol=1e-5, atol=1e-6)
