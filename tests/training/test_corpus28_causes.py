"""Session corpus28 (issue 27): the causes met running the training corpus on main (/work/notes/corpus28.md). One
test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from _harness import load_module
from test_fresh_causes import _convert

# A loss reading values computed before the ``if`` whose branch holds the backward (cfh/connect4_a2c's
# ``update_policy``: the model's outputs, log-probabilities and entropy computed in the function body, then ``if
# algorithm == "PPO": for epoch ...: (epoch 0 reuses them) ... else: total_loss = ...; total_loss.backward()``). The
# backward region is planned per block, so the branch's forward_fn read those values as constants: "no parameter
# reaches the loss" at the first step (the A2C branch), and the PPO branch's ``if epoch > 0: logp = ...`` made ``logp``
# UNBOUND on epoch 0 (torch reads the one computed before the loop). Now the values are recorded where they are
# computed and computed again inside the differentiation, and a name only some path assigns is handed in as bound.
# The slice kept: both branches, a value head unpacked in an ``if`` (cfh's), 3 updates each, losses and weights
# against torch's from the same weights.
BRANCH = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.pi = nn.Linear(8, 3)
        self.v = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.tanh(self.body(x))
        return self.pi(h), self.v(h).squeeze(1)


def update(model, opt, x, y, ret, algo):
    out = model(x)
    value = None
    if isinstance(out, tuple):
        out, value = out
    logp = F.log_softmax(out, dim=1)
    entropy = -(logp * torch.exp(logp)).sum(1)
    advantage = (ret - value).detach()
    if algo == "PPO":
        old = logp.detach()
        for epoch in range(2):
            if epoch > 0:
                out_new, value = model(x)
                logp = F.log_softmax(out_new, dim=1)
            ratio = torch.exp((logp - old) * y)
            loss = -(ratio.sum(1) * advantage).sum() + F.mse_loss(value, ret)
            opt.zero_grad()
            loss.backward()
            opt.step()
    else:
        loss = -((logp * y).sum(1) * advantage).sum() + F.mse_loss(value, ret) - 0.01 * entropy.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def train(model, x, y, ret, algo, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return [update(model, opt, x, y, ret, algo) for _ in range(steps)]
'''


def test_a_loss_reading_values_computed_before_its_branch_trains_as_torch():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    code = _convert(BRANCH)
    t_mod, m_mod = load_module(BRANCH, "torch_branch"), load_module(code, "ms_branch")
    rng = np.random.RandomState(0)
    x = rng.randn(6, 4).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[[0, 1, 2, 0, 1, 2]]
    ret = rng.randn(6).astype(np.float32)
    for algo in ("A2C", "PPO"):
        torch.manual_seed(1)
        t_net, m_net = t_mod.Net(), m_mod.Net()
        transfer_weights({k: v.detach().clone() for k, v in t_net.state_dict().items()}, m_net)
        expected = t_mod.train(t_net, torch.tensor(x), torch.tensor(y), torch.tensor(ret), algo)
        got = m_mod.train(m_net, ms.Tensor(x), ms.Tensor(y), ms.Tensor(ret), algo)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=algo)
        np.testing.assert_allclose(m_net.pi.weight.asnumpy(), t_net.pi.weight.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=algo)
        np.testing.assert_allclose(m_net.body.weight.asnumpy(), t_net.body.weight.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=algo)


# A value collected through a method that appends its argument (minimalRL's REINFORCE: ``pi.put_data((r,
# prob[a]))``, ``def put_data(self, item): self.data.append(item)``, then ``for r, prob in self.data[::-1]: loss =
# -torch.log(prob) * R; loss.backward()`` in another method). Recorded as a direct ``append`` already was; before, the
# loss reached no parameter (refused at run time). The slice kept: two episodes of four fixed states (the action is
# the argmax: no random stream to share), the episode losses and the weights after each update against torch's.
COLLECTOR = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=0.01)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=0)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self):
        R = 0
        losses = []
        self.optimizer.zero_grad()
        for r, prob in self.data[::-1]:
            R = r + 0.98 * R
            loss = -torch.log(prob) * R
            loss.backward()
            losses.append(loss.item())
        self.optimizer.step()
        self.data = []
        return losses


def run(pi, states):
    out = []
    for episode in range(2):
        for s in states:
            prob = pi(torch.from_numpy(s).float())
            a = torch.argmax(prob)
            r = 1.0 + float(a.item())
            pi.put_data((r, prob[a]))
        out += pi.train_net()
    return out
'''


def test_a_value_collected_through_a_method_appending_it_trains_as_torch():
    import torch

    from mindport.migrator.weights import transfer_weights

    code = _convert(COLLECTOR)
    t_mod, m_mod = load_module(COLLECTOR, "torch_collector"), load_module(code, "ms_collector")
    states = [np.random.RandomState(k).randn(4).astype(np.float32) for k in range(4)]
    torch.manual_seed(2)
    t_pi, m_pi = t_mod.Policy(), m_mod.Policy()
    transfer_weights({k: v.detach().clone() for k, v in t_pi.state_dict().items()}, m_pi)
    expected, got = t_mod.run(t_pi, states), m_mod.run(m_pi, states)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(m_pi.fc1.weight.asnumpy(), t_pi.fc1.weight.detach().numpy(), rtol=1e-4, atol=1e-6)


# A hand edit of a param group's learning rate while a scheduler runs (trainfresh27's probe: OneCycleLR after 2
# epochs, torch 0.12444, the port 0.16187): ``g['lr'] = v`` stored a new value over the group's lr Parameter, which
# MindSpore's scheduler keeps assigning in place, so every later scheduler.step() was lost. Now written into the
# Parameter (mindport.runtime.optim.set_group). Measured: StepLR, LambdaLR, OneCycleLR x (loop over param_groups,
# ``param_groups[0]['lr'] = ``, ``*=``) all follow torch's lr; the slice kept: StepLR (chainable: reads the edited
# value) and OneCycleLR (mindport's own) with each edit form, 6 SGD steps, losses and lrs against torch's.
LR_EDIT = '''
import torch
import torch.nn as nn


def make():
    return nn.Linear(3, 1)


def run(model, kind):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if kind == "step":
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    else:
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.2, total_steps=8)
    x = torch.linspace(-1, 1, 12).reshape(4, 3)
    y = x.sum(1, keepdim=True)
    lrs, losses = [], []
    for epoch in range(6):
        if epoch == 3:
            for g in opt.param_groups:
                g["lr"] = g["lr"] * 0.3
        if epoch == 4:
            opt.param_groups[0]["lr"] *= 2.0
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        lrs.append(opt.param_groups[0]["lr"])
    return lrs, losses
'''


def test_a_hand_edit_of_a_groups_lr_keeps_the_scheduler_stepping_as_torch():
    import torch

    from mindport.migrator.weights import transfer_weights

    code = _convert(LR_EDIT)
    t_mod, m_mod = load_module(LR_EDIT, "torch_lr_edit"), load_module(code, "ms_lr_edit")
    for kind in ("step", "onecycle"):
        torch.manual_seed(0)
        t_model, m_model = t_mod.make(), m_mod.make()
        transfer_weights({k: v.detach().clone() for k, v in t_model.state_dict().items()}, m_model)
        t_lrs, t_losses = t_mod.run(t_model, kind)
        m_lrs, m_losses = m_mod.run(m_model, kind)
        np.testing.assert_allclose(m_lrs, t_lrs, rtol=1e-5, err_msg=kind)
        np.testing.assert_allclose(m_losses, t_losses, rtol=1e-4, err_msg=kind)
        np.testing.assert_allclose(m_model.weight.asnumpy(), t_model.weight.detach().numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=kind)


# torch.nn.utils.get_total_norm / clip_grads_with_norm_ (torch 2.6's two halves of clip_grad_norm_; cfh/connect4_a2c
# prints ``get_total_norm([p.grad for p in model.parameters() if p.grad is not None])`` after its backward): no mapping
# entry, the line was left torch (MP103) and the port died on ``model.parameters()``. The clip_grad module's surface
# (clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, clip_grads_with_norm_) is mapped now; the slice
# kept: 3 SGD steps clipping with the two halves (norms 2 and inf), losses and norms against torch's.
NORMS = '''
import torch
import torch.nn as nn


def make():
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def run(model, x, y, norm_type):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    out = []
    for _ in range(3):
        loss = ((model(x) - y) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        total = torch.nn.utils.get_total_norm([p.grad for p in model.parameters() if p.grad is not None], norm_type)
        torch.nn.utils.clip_grads_with_norm_(model.parameters(), 0.5, total)
        opt.step()
        out += [loss.item(), total.item()]
    return out
'''


def test_get_total_norm_and_clip_grads_with_norm_train_as_torch():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    code = _convert(NORMS)
    assert "torch" not in code.replace("mindport", "")
    t_mod, m_mod = load_module(NORMS, "torch_norms"), load_module(code, "ms_norms")
    x = np.random.RandomState(3).randn(5, 3).astype(np.float32)
    y = np.random.RandomState(4).randn(5, 2).astype(np.float32)
    for norm_type in (2.0, float("inf")):
        torch.manual_seed(3)
        t_model, m_model = t_mod.make(), m_mod.make()
        transfer_weights({k: v.detach().clone() for k, v in t_model.state_dict().items()}, m_model)
        expected = t_mod.run(t_model, torch.tensor(x), torch.tensor(y), norm_type)
        got = m_mod.run(m_model, ms.Tensor(x), ms.Tensor(y), norm_type)
        np.testing.assert_allclose(got, expected, rtol=1e-4, err_msg=str(norm_type))
