"""Session trainfresh12 (issue 27): causes found at first contact with the fresh12 entries and the open item of
session 11. One test each, on real torch and real MindSpore, each failing without the fix; expected values are
torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

NONE_GRADIENT_FOR_A_NON_TENSOR = '''
import torch


class Pick(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, index, scale):
        ctx.index = index
        ctx.scale = scale
        return x[index] * scale

    @staticmethod
    def backward(ctx, grad):
        full = torch.zeros(3, 4)
        full[ctx.index] = grad * ctx.scale
        return full, None, None


class Gate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, mask):
        ctx.save_for_backward(mask)
        return x * mask

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * mask, None


w = torch.nn.Parameter(torch.tensor([[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0], [2.0, 0.0, -0.5, 1.0]]))
m = torch.nn.Parameter(torch.tensor([1.0, 0.0, 1.0, 1.0]))
opt = torch.optim.SGD([w, m], lr=0.1)
for step in range(4):
    opt.zero_grad()
    y = Pick.apply(w, (1,), 2.0)
    loss = (Gate.apply(y, m) ** 2).sum()
    loss.backward()
    mg = m.grad.tolist() if m.grad is not None else [0.0] * 4
    print("step", loss.item(), *w.grad.flatten().tolist(), *mg, *w.flatten().tolist(), *m.tolist())
    opt.step()
'''


def test_a_none_gradient_for_a_non_tensor_input_is_no_gradient():
    """torchdiffeq's ``_UncheckedAssign.backward`` returns ``None`` for its ``index`` input (a tuple): the rule made
    it ``ops.zeros_like(index)`` ("'tuple' object has no attribute 'dtype'", torchdiffeq/ode_demo, session 11). A
    ``None`` gradient is now zeros for a Tensor input (Gate's ``mask``, a Parameter: in torch no gradient reaches it,
    it does not move) and no gradient for anything else (Pick's tuple index and float scale)."""
    code = _convert(NONE_GRADIENT_FOR_A_NON_TENSOR)
    assert "def bprop" in code, code
    t, ms_ = _losses(NONE_GRADIENT_FOR_A_NON_TENSOR, "torch_nonegrad"), _losses(code, "ms_nonegrad")
    assert len(t) == len(ms_) == 4, (t, ms_, code)
    np.testing.assert_allclose(ms_, t, rtol=1e-5, atol=1e-6)
    assert t[0][13:17] == [0.0, 0.0, 0.0, 0.0]  # no gradient reaches m (Gate's None for a tensor input)
