"""Causes met by fresh50's first contact (benchmarks/training/fresh50.json), each a class with a fixture of our own,
run converted under MindSpore against torch; the expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh18_causes import _run_in_folder
from test_fresh46_causes import _convert_and_run

# yaodongyu/TRADES' trades_loss chooses its attack by a ``distance`` argument: the ``l_inf`` branch differentiates the
# model's KL loss w.r.t. the input (torch.autograd.grad), the ``l_2`` branch builds ``optimizer_delta = SGD([delta])``
# and steps it. The step's weights named every optimizer the function steps, so the ``l_inf`` step's
# mindport.runtime.training.parameters(optimizer_delta, ...) read a name only the other branch binds (first run
# fresh50: UnboundLocalError: cannot access local variable 'optimizer_delta', both TRADES entries). Class: an
# optimizer every binding of which lies in another branch of an ``if`` than the step's loop (no loop around that
# ``if``) is not one of the step's weight sources.
BRANCH_OPTIMIZER = '''
import torch
import torch.nn as nn


def attack(model, x, y, optimizer, kind, steps=3):
    x_adv = x.detach() + 0.01
    if kind == "sign":
        for _ in range(steps):
            x_adv.requires_grad_()
            loss = ((model(x_adv) - y) ** 2).sum()
            grad = torch.autograd.grad(loss, [x_adv])[0]
            x_adv = x_adv.detach() + 0.05 * torch.sign(grad.detach())
    elif kind == "opt":
        delta = torch.zeros_like(x, requires_grad=True)
        opt_delta = torch.optim.SGD([delta], lr=0.05)
        for _ in range(steps):
            opt_delta.zero_grad()
            loss = -((model(x + delta) - y) ** 2).sum()
            loss.backward()
            opt_delta.step()
        x_adv = (x + delta).detach()
    optimizer.zero_grad()
    return ((model(x_adv) - y) ** 2).mean() + ((model(x) - y) ** 2).mean()


def main():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.linspace(-1, 1, 15).reshape(5, 3)
    y = torch.linspace(0, 1, 5).reshape(5, 1)
    for step in range(6):
        optimizer.zero_grad()
        loss = attack(model, x, y, optimizer, "sign" if step % 2 == 0 else "opt")
        loss.backward()
        optimizer.step()
        print("step", loss.item())


if __name__ == "__main__":
    main()
'''


def test_an_optimizer_bound_in_another_branch_is_not_a_weight_source_of_the_step(tmp_path):
    t, m, code = _convert_and_run(tmp_path, BRANCH_OPTIMIZER)
    sign_step = code[code.index('if kind == "sign"'):code.index('elif kind == "opt"')]
    assert "value_and_grad" in sign_step and "opt_delta" not in sign_step, code
    assert len(t) == len(m) == 6
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[-2][0] < t[0][0]  # training happens (same attack, later step)


# ildoonet/pytorch-gradual-warmup-lr's demo hands its optimizer ``model = [torch.nn.Parameter(torch.randn(2, 2,
# requires_grad=True))]``: a list holding a leaf. The rule that makes a requires_grad tensor an optimizer updates a
# named Parameter took the list display for the tensor and wrapped it whole, ``ms.Parameter([ms.Parameter(...)],
# name='model')`` (first run fresh50: TypeError: can only concatenate str (not "_TensorMeta") to str, from
# MindSpore's optimizer). Class: a container display (list, tuple, set, dict, comprehension) of leaves is not a leaf;
# its elements stay Parameters, the list a list.
LEAF_LIST = '''
import torch

w = [torch.nn.Parameter(torch.linspace(-1, 1, 4).reshape(2, 2).requires_grad_(True))]
pair = (torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.zeros(2)))
opt = torch.optim.SGD(w, lr=0.1)
opt2 = torch.optim.SGD(pair, lr=0.5)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
x = torch.tensor([[1.0, 2.0], [0.5, -1.0]])
for epoch in range(5):
    opt.zero_grad()
    opt2.zero_grad()
    loss = ((x @ w[0]) ** 2).mean() + ((pair[0] * pair[1] - 1) ** 2).sum()
    loss.backward()
    opt.step()
    opt2.step()
    sched.step()
    print("step", loss.item(), opt.param_groups[0]["lr"])
'''


def test_a_list_of_leaves_handed_to_an_optimizer_stays_a_list(tmp_path):
    t, m, code = _convert_and_run(tmp_path, LEAF_LIST)
    assert "Parameter([" not in code and "Parameter((" not in code, code
    assert len(t) == len(m) == 5
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert t[-1][0] < t[0][0]


# locuslab/fast_adversarial's MNIST script writes a one-cycle rate by hand each batch with
# ``opt.param_groups[0].update(lr=lr)``. A MindSpore optimizer's group holds its ``lr`` as a Parameter its scheduler
# writes in place; ``dict.update`` rebinds the entry to a float. The optimizer reads the new value (the locuslab
# script's curve did not change with this fix), but a scheduler stepping afterwards writes the old Parameter: lost
# (this fixture before the fix: the port's rate stays 0.2 where torch's StepLR halves it to 0.1, 0.05, 0.025, and the
# loss is 1.3e-2 off by the sixth step). Class: ``update`` (keywords or a mapping) on an optimizer's param group
# (``X.param_groups[i]`` or a loop target over ``X.param_groups``) stores each key as ``group[key] = v`` does
# (set_group): mindport.runtime.optim.update_group.
GROUP_UPDATE = '''
import torch

model = torch.nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2, 0.1]]))
    model.bias.fill_(0.05)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
y = torch.tensor([[1.0], [0.0], [-1.0], [0.5]])
for step in range(8):
    if step == 3:
        opt.param_groups[0].update(lr=0.2)
    if step == 6:
        for g in opt.param_groups:
            g.update({"lr": 0.08})
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    sched.step()
    print("step", loss.item(), opt.param_groups[0]["lr"])
'''


def test_a_param_group_updated_with_dict_update_keeps_its_scheduler(tmp_path):
    t, m, code = _convert_and_run(tmp_path, GROUP_UPDATE)
    assert code.count("update_group(") == 2, code
    assert len(t) == len(m) == 8
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert [r[1] for r in t][3:] == [0.1, 0.1, 0.05, 0.08, 0.04]  # torch: the hand-set 0.2 halved twice, 0.08 once


# Met while writing the fixture above (TRADES' trades_loss resets the optimizer inside the forward, and its train()
# resets it too): a loop whose only zero_grad() is in a function of the file it calls, handed the optimizer, was taken
# for a loop with no reset at all, and the port summed every step's gradients (accum_grads) where torch's .grad held
# one step's (5.7e1 relative by the third step). Class: a call handing an optimizer to a module-level function that
# calls zero_grad() on that parameter is a reset; such a loop goes to the general backward region, which keeps .grad.
HELPER_RESETS = BRANCH_OPTIMIZER.replace("        optimizer.zero_grad()\n        loss = attack(", "        loss = attack(")


def test_a_loop_whose_helper_resets_the_gradients_does_not_sum_them(tmp_path):
    assert HELPER_RESETS != BRANCH_OPTIMIZER
    t, m, code = _convert_and_run(tmp_path, HELPER_RESETS)
    assert "accum_grads" not in code, code
    assert len(t) == len(m) == 6
    np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
