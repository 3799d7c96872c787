"""Causes found by the training corpus's first contact with nine more repositories (benchmarks/training/, session
note trainfresh4.md): one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

ACCUMULATION_RESET_BEFORE_FORWARD = '''
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

x = torch.tensor(np.linspace(-1, 1, 40, dtype=np.float32).reshape(10, 4))
y = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1, 1, 0])
batches = [(x[i:i + 2], y[i:i + 2]) for i in range(0, 10, 2)]
model = nn.Linear(4, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor(np.linspace(-0.5, 0.5, 8, dtype=np.float32).reshape(2, 4)))
    model.bias.fill_(0.1)
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=0.05)


def train_one_epoch(accum_steps=2):
    total, n = 0.0, 0
    for batch_idx, (xb, yb) in enumerate(batches):
        if batch_idx % accum_steps == 0:
            optimizer.zero_grad()
        loss = criterion(model(xb), yb) / accum_steps
        loss.backward()
        if (batch_idx + 1) % accum_steps == 0:
            optimizer.step()
        total += loss.item() * accum_steps
        n += 1
    if n % accum_steps != 0:
        optimizer.step()
    return total / n


for epoch in range(4):
    loss = train_one_epoch()
    print("step", loss, float(model.weight.sum()), float(model.bias.sum()))
'''


def test_accumulation_reset_before_the_forward_and_a_remainder_step_after_the_loop():
    """gapatron/grad_accum: ``if batch_idx % k == 0: optimizer.zero_grad()`` before the forward, ``step()`` every k
    batches, and after the loop ``if n % k != 0: optimizer.step()`` for the remainder. The native rewrite dropped only a
    top-level ``zero_grad()`` (the nested one stayed: 'Adam' object has no attribute 'zero_grad') and the step after the
    loop read ``.grad``, which the native rewrite does not keep (it would have applied zeros). Both shapes go to the
    general backward region, which keeps torch's ``.grad``."""
    code = _convert(ACCUMULATION_RESET_BEFORE_FORWARD)
    assert "import torch" not in code and ".zero_grad()" not in code, code
    t, m = _losses(ACCUMULATION_RESET_BEFORE_FORWARD, "torch_accum_reset"), _losses(code, "ms_accum_reset")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]


SECOND_DERIVATIVES_OF_ONE_OUTPUT = '''
import numpy as np
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.tensor(np.cos(np.arange(p.numel(), dtype=np.float32) + i).reshape(p.shape) * 0.5))
x = torch.tensor(np.linspace(-1, 1, 12, dtype=np.float32), requires_grad=True).view(-1, 1)
t = torch.tensor(np.linspace(0, 1, 12, dtype=np.float32), requires_grad=True).view(-1, 1)
u_true = torch.sin(-x * np.pi)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(4):
    optimizer.zero_grad()
    u_init = net(torch.hstack([x, torch.zeros_like(t)]))
    loss1 = torch.mean((u_init - u_true) ** 2)
    u = net(torch.hstack([x, t]))
    u_t = torch.autograd.grad(u, t, torch.ones_like(u), create_graph=True)[0]
    u_x = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    u_xx = torch.autograd.grad(u_x, x, torch.ones_like(u), create_graph=True)[0]
    loss2 = torch.mean((u_t + u * u_x - 0.01 * u_xx) ** 2)
    loss = loss1 + loss2
    loss.backward(retain_graph=True)
    optimizer.step()
    print("step", loss.item(), loss2.item())
'''


def test_several_gradients_of_one_output_and_a_gradient_of_a_gradient():
    """osl202/pinn_burgers: a physics-informed loss takes u_t and u_x of one output u (two torch.autograd.grad calls
    with create_graph=True) and u_xx, the gradient of the gradient u_x. The first call became a function of t
    differentiated by grad_graph; the second then met that function's definition ('computed in a compound
    statement') and stayed torch.autograd.grad on a MindSpore tensor: 'Expected output to be a torch.Tensor'. A later
    site now takes an earlier site's definition and call with it (nested grad_graph: the gradient of a gradient), a
    line reading only their results moves after the call, and the names it makes are new in the block."""
    code = _convert(SECOND_DERIVATIVES_OF_ONE_OUTPUT)
    assert "import torch" not in code and "autograd" not in code, code
    t, m = _losses(SECOND_DERIVATIVES_OF_ONE_OUTPUT, "torch_pinn"), _losses(code, "ms_pinn")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4)
    assert t[-1][0] < t[0][0]


def test_runtime_tanh_derivatives_at_zero():
    """The runtime's precise tanh (mindport.runtime.math.tanh, behind nn.Tanh / torch.tanh) was written with sign(x)
    and |x|, whose derivatives are 0 at 0: tanh'(0) came out 0 instead of 1, so a pre-activation of exactly 0 (a zero
    bias on a zero input, a zero initial hidden state, t = 0 in osl202/pinn_burgers) passed no gradient, silently.
    First and second derivatives against torch, 0 included."""
    import mindspore as ms
    import torch

    from mindport.runtime import math as mp_math

    xs = np.array([-9.0, -3.0, -0.5, 0.0, 1e-3, 0.5, 3.0, 9.0], dtype=np.float32)
    x = torch.tensor(xs, requires_grad=True)
    g1 = torch.autograd.grad(torch.tanh(x).sum(), x, create_graph=True)[0]
    g2 = torch.autograd.grad(g1.sum(), x)[0]
    f = lambda v: mp_math.tanh(v).sum()  # noqa: E731
    m1 = ms.grad(f)(ms.Tensor(xs)).asnumpy()
    m2 = ms.grad(lambda v: ms.grad(f)(v).sum())(ms.Tensor(xs)).asnumpy()
    np.testing.assert_allclose(m1, g1.detach().numpy(), rtol=1e-5, atol=5e-7)
    np.testing.assert_allclose(m2, g2.numpy(), rtol=1e-5, atol=5e-7)
    np.testing.assert_allclose(mp_math.tanh(ms.Tensor(xs)).asnumpy(), np.tanh(xs.astype(np.float64)), rtol=0, atol=2e-7)
