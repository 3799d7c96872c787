"""Session trainfresh25 (issue 27): causes found at first contact with the fresh25 entries and the open classes the
brief named (/work/notes/trainfresh25.md). One test each, on real torch and real MindSpore, each failing without its
fix; the expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from _harness import load_module
from test_fresh_causes import _convert

# ``nn.BatchNorm*d(momentum=None)``: torch's running statistics are then the cumulative average of every training
# batch's (factor 1/n, n = num_batches_tracked); MindSpore's BatchNorm takes a fixed momentum only (the converter
# flagged it MP102 and kept torch's line). Four training forwards of different inputs through a BatchNorm1d on 2-D
# and on 3-D inputs, a BatchNorm2d without affine parameters and a BatchNorm3d, then an eval forward: every output,
# and the running statistics after each step, against torch's; a BatchNorm1d with a number momentum beside them
# stays MindSpore's own layer (momentum 1 - torch's).
CUMULATIVE_BN = '''
import torch
import torch.nn as nn


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(6, momentum=None)
        self.bn2 = nn.BatchNorm2d(3, momentum=None, affine=False)
        self.bn3 = nn.BatchNorm3d(2, eps=1e-3, momentum=None)
        self.fixed = nn.BatchNorm1d(6, momentum=0.3)

    def forward(self, a, seq, img, vol):
        return self.fixed(self.bn1(a)), self.bn1(seq), self.bn2(img), self.bn3(vol)


def run(norms, batches, training):
    norms.train(training)
    return [norms(*batch) for batch in batches]
'''


def _batches(seed, n):
    rng = np.random.RandomState(seed)
    return [(rng.normal(2.0, 3.0, (8, 6)), rng.normal(-1.0, 0.5, (4, 6, 5)), rng.normal(0.5, 2.0, (5, 3, 4, 4)),
             rng.normal(1.0, 1.5, (3, 2, 2, 3, 3))) for _ in range(n)]


def test_batch_norm_momentum_none_keeps_the_cumulative_average():
    import mindspore as ms
    import torch

    code = _convert(CUMULATIVE_BN)
    assert "mindport: MP" not in code, code
    assert "CumulativeBatchNorm1d" in code and "nn.BatchNorm1d(num_features=6, momentum=0.7" in code, code
    t_mod, m_mod = load_module(CUMULATIVE_BN, "torch_cumulative_bn"), load_module(code, "ms_cumulative_bn")
    t_norms, m_norms = t_mod.Norms(), m_mod.Norms()
    train = [[b.astype(np.float32) for b in batch] for batch in _batches(0, 4)]
    test = [[b.astype(np.float32) for b in batch] for batch in _batches(1, 1)]

    def stats_t():
        bns = (t_norms.bn1, t_norms.bn2, t_norms.bn3, t_norms.fixed)
        return [np.concatenate([b.running_mean.numpy(), b.running_var.numpy()]) for b in bns]

    def stats_m():
        bns = (m_norms.bn1, m_norms.bn2, m_norms.bn3.bn2d, m_norms.fixed)
        return [np.concatenate([b.moving_mean.asnumpy(), b.moving_variance.asnumpy()]) for b in bns]

    for batch in train:
        t_out = t_mod.run(t_norms, [[torch.tensor(b) for b in batch]], True)[0]
        m_out = m_mod.run(m_norms, [[ms.Tensor(b) for b in batch]], True)[0]
        for t, m in zip(t_out, m_out):
            np.testing.assert_allclose(m.asnumpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
        for t, m in zip(stats_t(), stats_m()):
            np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-6)
    assert int(t_norms.bn1.num_batches_tracked) == 8 and int(m_norms.bn1.num_batches_tracked.asnumpy()) == 8
    t_out = t_mod.run(t_norms, [[torch.tensor(b) for b in test[0]]], False)[0]
    m_out = m_mod.run(m_norms, [[ms.Tensor(b) for b in test[0]]], False)[0]
    for t, m in zip(t_out, m_out):
        np.testing.assert_allclose(m.asnumpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)


# ``reversed(t)`` of a tensor is torch's ``t.flip(0)`` (a 0-d tensor itself), a tensor; on MindSpore's Tensor,
# Python's sequence protocol gave a ``reversed`` iterator (gillesdami/actor_critic_cartpole's discounted returns:
# "AttributeError: 'reversed' object has no attribute 'mean'"). The helper file imports torch only, so its port
# imports no runtime module itself: the project's other files do (mindport.runtime._graph installs the method).
REVERSED = '''
import torch


def discount(rewards, gamma):
    out, running = [], 0
    for reward in reversed(rewards):
        running = reward + gamma * running
        out.append(running)
    return reversed(torch.stack(out))


def run():
    d = discount(torch.tensor([1.0, 0.5, 2.0, 1.0, -1.0]), 0.9)
    rows = [r.sum() for r in reversed(torch.arange(6.0).reshape(3, 2))]
    return (d - d.mean()) / (d.std() + 1e-8), reversed(torch.tensor(3.0)), torch.stack(rows)
'''


def test_reversed_of_a_tensor_is_the_tensor_flipped():
    import mindport.runtime  # noqa: F401 - what the project's other converted files import

    code = _convert(REVERSED)
    t_out = load_module(REVERSED, "torch_reversed").run()
    m_out = load_module(code, "ms_reversed").run()
    for t, m in zip(t_out, m_out):
        np.testing.assert_allclose(m.asnumpy(), t.numpy(), rtol=1e-6, atol=1e-7)


# A runtime import the conversion adds went after the file's last top-level import; a script that imports again
# further down (``from collections import OrderedDict`` before its third way of building the model) used the runtime
# name on an earlier line (kang9kang/linreg_param_groups: "NameError: name 'mp_nn' is not defined" at
# ``net.add_module('linear', ...)``). The runtime imports now end the file's leading imports.
LATE_IMPORT = '''
import torch
import torch.nn as nn

net = nn.Sequential()
net.add_module('linear', nn.Linear(2, 1))
nn.init.constant_(net.linear.weight, 0.5)
nn.init.constant_(net.linear.bias, -1.0)

from collections import OrderedDict

net2 = nn.Sequential(OrderedDict([('linear', nn.Linear(2, 1))]))
nn.init.constant_(net2.linear.weight, 2.0)
nn.init.constant_(net2.linear.bias, 0.25)
x = torch.tensor([[1.0, 2.0], [3.0, -4.0]])
out = net(x) + net2(x)
'''


def test_runtime_imports_come_before_a_later_import_and_its_uses():
    code = _convert(LATE_IMPORT)
    assert code.index("from mindport.runtime") < code.index("add_module"), code
    t_out = load_module(LATE_IMPORT, "torch_late_import").out
    m_out = load_module(code, "ms_late_import").out
    np.testing.assert_allclose(m_out.asnumpy(), t_out.detach().numpy(), rtol=1e-6)


# Values saved while acting as a tuple (``SavedAction(log_prob, value)``, a namedtuple) and a loop the training-loop
# rule writes natively (``ms.value_and_grad(forward_fn, None, params)``): the tuple was not recorded (``record`` took
# tensors only) and MindSpore's value_and_grad never computes a recorded value again, so the loss built from them was
# a constant of the differentiation and every gradient zero: the agent did not learn, silently (ghj0504520/RL-LIB's
# A2C and REINFORCE agents). Each tensor of the tuple is now recorded as that item, and the native loop's function
# goes through mp_train.replayed. The action is the argmax (no sampling), so both sides take the same steps; the
# losses and the trained weights are compared with torch's after three updates of Adam.
SAVED_TUPLES = '''
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

Saved = namedtuple('Saved', ['log_prob', 'value'])


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 16)
        self.pi = nn.Linear(16, 2)
        self.v = nn.Linear(16, 1)

    def forward(self, x):
        h = F.relu(self.fc(x))
        return F.softmax(self.pi(h), dim=-1), self.v(h)


class Agent:
    def __init__(self, model):
        self.model = model
        self.saved = []
        self.rewards = []

    def act(self, state):
        probs, value = self.model(state)
        action = probs.argmax()
        self.saved.append(Saved(torch.log(probs[action]), value))
        return action.item()

    def loss(self):
        returns = torch.tensor([float(len(self.rewards) - t) for t in range(len(self.rewards))])
        log_probs = torch.stack([s.log_prob for s in self.saved])
        values = torch.stack([s.value for s in self.saved]).squeeze(-1)
        return -(log_probs * (returns - values.detach())).sum() + F.mse_loss(values, returns)


def train(model, states):
    agent = Agent(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for episode in range(3):
        for state in states:
            agent.act(state)
            agent.rewards.append(1.0)
        optimizer.zero_grad()
        loss = agent.loss()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        del agent.saved[:]
        del agent.rewards[:]
    return losses
'''


def test_a_saved_tuple_reaches_the_parameters_through_a_native_loop():
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = _convert(SAVED_TUPLES)
    assert "mp_train.record(Saved(" in code and "replayed(forward_fn)" in code, code
    t_mod, m_mod = load_module(SAVED_TUPLES, "torch_saved_tuples"), load_module(code, "ms_saved_tuples")
    torch.manual_seed(0)
    t_model, m_model = t_mod.Policy(), m_mod.Policy()
    transfer_weights({k: v.detach().clone() for k, v in t_model.state_dict().items()}, m_model)
    states = np.random.RandomState(0).normal(0, 1, (5, 4)).astype(np.float32)
    t_losses = t_mod.train(t_model, [torch.tensor(s) for s in states])
    m_losses = m_mod.train(m_model, [ms.Tensor(s) for s in states])
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-5)
    assert abs(t_losses[2] - t_losses[0]) > 1e-3  # the weights moved
    t_weights = [p.detach().numpy() for p in t_model.parameters()]
    m_weights = [p.asnumpy() for p in m_model.trainable_params()]
    for t, m in zip(t_weights, m_weights):
        np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
