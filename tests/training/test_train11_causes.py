"""Session 11 (branch train11, issue 27): causes found on the training corpus and the open items of session 10. One
test each, on real torch and real MindSpore, each failing without the fix; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

ZERO_GRADIENT_BY_POSITION = '''
import torch

w = torch.nn.Parameter(torch.tensor([3.0, -2.0]))
v = torch.nn.Parameter(torch.tensor([0.5, 0.25]))
u = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
x = torch.tensor([[1.0, 0.5], [0.25, -1.0]])
opt = torch.optim.SGD([{"params": [w, v]}, {"params": [u], "weight_decay": 0.1}], lr=0.5, momentum=0.5)
for _ in range(4):
    opt.zero_grad()
    dead = torch.relu(x @ u - 100.0).sum()  # u is used, its gradient is exactly zero
    loss = (w ** 2).sum() + ((v - 1) ** 2).sum() + dead
    loss.backward()
    print("step", loss.item(), *w.grad.tolist(), *v.grad.tolist(), *u.grad.tolist(), *w.tolist(), *u.tolist())
    opt.step()
'''


def test_a_used_parameter_passed_by_position_with_an_exactly_zero_gradient_gets_zeros():
    """torch gives a leaf the loss used an all-zero ``.grad`` (weight decay then still moves it); the
    port took a Parameter passed by position with an exactly zero gradient as not reached (``.grad`` None: printing
    it raised, and SGD skipped it). w's gradient is zero after its first step (lr 0.5 moves it to 0), u's always (a
    dead ReLU)."""
    code = _convert(ZERO_GRADIENT_BY_POSITION)
    assert "leaves=" in code, code
    t, m = _losses(ZERO_GRADIENT_BY_POSITION, "torch_zerobypos"), _losses(code, "ms_zerobypos")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[1][1:3] == [0.0, 0.0] and t[0][5:7] == [0.0, 0.0]  # the zero gradients the test is about
    assert t[3][9:11] != t[0][9:11]  # weight decay moves u on its zero gradients


FORMATTED_TENSOR_IN_A_CHECK = '''
import torch

w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = (w ** 2).sum()
    assert torch.isfinite(torch.abs(w)).all(), 'non-finite values in state: {}'.format(torch.abs(w))
    loss.backward()
    opt.step()
    print("step", loss.item())
'''


def test_a_statement_formatting_a_tensor_stays_converted():
    """torchdiffeq's ``assert torch.isfinite(y0).all(), '...: {}'.format(y0)`` (torchdiffeq/ode_demo, first contact
    this session): the format of a tensor was flagged MP102 and the whole statement put back to torch, which then
    got MindSpore tensors ("isfinite(): argument 'input' must be Tensor, not Tensor"). It stays converted now, with
    MP102 as a warning (the text of a tensor is MindSpore's)."""
    from mindport import convert_source

    result = convert_source(FORMATTED_TENSOR_IN_A_CHECK, "script.py")
    assert [(d.code, d.severity) for d in result.diagnostics] == [("MP102", "warning")], result.diagnostics
    assert "import torch" not in result.code and "torch.isfinite" not in result.code, result.code
    t, m = _losses(FORMATTED_TENSOR_IN_A_CHECK, "torch_fmtcheck"), _losses(result.code, "ms_fmtcheck")
    assert len(t) == len(m) == 3, (t, m, result.code)
    np.testing.assert_allclose(m, t, rtol=1e-6)
