"""Backward hooks and ``.grad`` of the tensors a converted training region differentiates by position (session 10,
branch train10): ``requires_grad`` leaves and Parameters passed to the forward directly rather than as a model's
weights. One test each, on real torch and real MindSpore, each failing without the fix; expected values are torch's,
run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

LEAF_HOOKS_MANUAL_UPDATE = '''
import torch

w = torch.tensor([3.0, -2.0, 0.5], requires_grad=True)
b = torch.zeros(1, requires_grad=True)
seen = []
h = w.register_hook(lambda g: torch.clamp(g, -1.0, 1.0))
hb = b.register_hook(lambda g: seen.append(float(g.sum())))
x = torch.tensor([[1.0, 2.0, 0.0], [3.0, -1.0, 1.0]])
for step in range(4):
    loss = ((x @ w + b) ** 2).sum() * 5
    loss.backward()
    print("step", loss.item(), *w.grad.tolist(), b.grad.item())
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.01 * b.grad
    w.grad.zero_()
    b.grad = None
    if step == 1:
        h.remove()
print("step", *seen)
'''


def test_hooks_on_requires_grad_leaves_run_and_survive_manual_updates():
    """A clamping hook and a recording hook (returning None) on requires_grad tensors the loop updates by hand, one
    hook removed after two steps. Before: the region differentiated copies of the leaves, which carry no hooks (grad
    30 where torch's clamp gives 1, nothing recorded), and the in-place update (assign_value) dropped the hooks."""
    code = _convert(LEAF_HOOKS_MANUAL_UPDATE)
    assert "leaves=2" in code, code
    t, m = _losses(LEAF_HOOKS_MANUAL_UPDATE, "torch_leafhooks"), _losses(code, "ms_leafhooks")
    assert len(t) == len(m) == 5, (t, m, code)
    for a, b in zip(m, t):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5)
    assert t[0][1:4] == [1.0, -1.0, 1.0] and abs(t[2][1]) > 1  # clamped while the hook is on, not after


PARAMETER_BY_POSITION = '''
import torch

w = torch.nn.Parameter(torch.tensor([3.0, -2.0]))
v = torch.nn.Parameter(torch.tensor([0.5, 0.25]))  # lr 0.5 would move w to exactly 0: its zero gradient is open
h = v.register_hook(lambda g: torch.clamp(g, -1.0, 1.0))
opt = torch.optim.SGD([w, v], lr=0.3)
for _ in range(3):
    opt.zero_grad()
    loss = (w ** 2).sum() + (v ** 2).sum() * 40
    loss.backward()
    print("step", loss.item(), *w.grad.tolist(), *v.grad.tolist())
    opt.step()
'''


def test_a_parameter_passed_by_position_keeps_its_hook():
    """Parameters that are no model's weights are passed to the forward by position (leaves=2). Before: v's hook
    was ignored (gradient 40 where torch's clamp gives 1)."""
    code = _convert(PARAMETER_BY_POSITION)
    assert "leaves=" in code, code
    t, m = _losses(PARAMETER_BY_POSITION, "torch_parambypos"), _losses(code, "ms_parambypos")
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[0][3:5] == [1.0, 1.0]  # clamped


AUTOGRAD_GRAD_WITH_HOOKS = '''
import torch

x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
x.register_hook(lambda g: g * 2)
x.register_hook(lambda g: g + 1)
for step in range(3):
    y = (x * x).sum() + (3 * x).sum()
    g, = torch.autograd.grad(y, x)
    print("step", y.item(), *g.tolist())
    with torch.no_grad():
        x -= 0.1 * g
'''


def test_torch_autograd_grad_runs_a_leafs_hooks_in_order_on_its_whole_gradient():
    """torch.autograd.grad runs a leaf's hooks too, in registration order, once on the leaf's summed gradient
    (x is used twice). Before: no hook ran (gradient 5 where torch gives 11)."""
    code = _convert(AUTOGRAD_GRAD_WITH_HOOKS)
    assert "grads_for" in code, code
    t, m = _losses(AUTOGRAD_GRAD_WITH_HOOKS, "torch_aghooks"), _losses(code, "ms_aghooks")
    assert len(t) == len(m) == 3, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)


WRITE_INTO_A_TENSOR_MADE_BEFORE_THE_STEP = '''
import torch
import torch.nn as nn

net, target = nn.Linear(3, 2), nn.Linear(3, 2)
with torch.no_grad():
    net.weight.copy_(torch.tensor([[0.3, -0.2, 0.1], [0.05, 0.4, -0.3]]))
    net.bias.copy_(torch.tensor([0.1, -0.1]))
    target.weight.copy_(torch.tensor([[0.2, 0.1, -0.4], [-0.3, 0.25, 0.15]]))
    target.bias.copy_(torch.tensor([0.0, 0.2]))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
s = torch.tensor([[1.0, 0.5, -1.0], [0.2, -0.3, 0.8], [-1.2, 0.7, 0.1], [0.4, 0.9, -0.6]])
s2 = torch.tensor([[0.3, -0.8, 0.5], [1.1, 0.2, -0.4], [-0.5, -0.6, 0.9], [0.7, 0.1, 0.3]])
a = torch.tensor([[0], [1], [1], [0]])
r = torch.tensor([[1.0], [0.0], [-1.0], [0.5]])
term = [0, 1, 0, 0]
for step in range(4):
    q = net(s).gather(1, a)
    idx = torch.tensor([i for i, t in enumerate(term) if t == 0], dtype=torch.int64)
    nxt = torch.zeros(4, 1)
    nxt[idx] = target(s2.index_select(0, idx)).detach().max(1)[0].unsqueeze(1)
    loss = nn.functional.smooth_l1_loss(r + 0.9 * nxt, q)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", loss.item(), nxt.sum().item())
'''


def test_an_indexed_write_into_a_tensor_made_before_the_step_runs_as_in_torch():
    """kenjyoung/dqn (training corpus, first reached this session): Q_s_prime_a_prime = zeros(...) made before the
    loss, then Q_s_prime_a_prime[idx] = target_net(...).detach()... in it. The converted region takes the tensor as an
    argument (and returns it); MindSpore refused the write into a network input ("Can not modify tensor id of input
    tensor from network by assign value"). The argument is now a copy made inside the differentiation."""
    code = _convert(WRITE_INTO_A_TENSOR_MADE_BEFORE_THE_STEP)
    assert "grad_fn(nxt)" in code, code
    t, m = _losses(WRITE_INTO_A_TENSOR_MADE_BEFORE_THE_STEP, "torch_dqnlike"), _losses(code, "ms_dqnlike")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-7)
    assert t[-1][0] < t[0][0]
