"""Session train18 (issue 27): causes found in the training corpus (hiddenbeginner/reinforce, vltkv/dcgan and the
entries 101..156 reached first here). One test each, on real torch and real MindSpore, each failing without the fix;
expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# HiddenBeginner/rl-pytorch-exercise REINFORCE's shape: the agent's select_action() returns (action, probs[action]),
# run_episode() unpacks the pair and appends (reward, p) to self.data, train() builds the loss from self.data.
# Actions are drawn with numpy from the probabilities (.item(): no gradient), so both sides take the same actions.
AGENT_TUPLE_RETURN = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=0)


class Agent:
    def __init__(self, policy, lr):
        self.policy = policy
        self.optimizer = Adam(self.policy.parameters(), lr=lr)
        self.rng = np.random.RandomState(0)
        self.data = []

    def select_action(self, s):
        probs = self.policy.forward(s)
        a = int(self.rng.rand() < probs[1].item())
        return a, probs[a]

    def run_episode(self, start):
        s = start
        for t in range(6):
            s = torch.FloatTensor(s)
            a, p = self.select_action(s)
            s = np.array([0.9 * v + (0.2 if a else -0.1) for v in s.tolist()])
            r = 1.0 - abs(float(s[0]))
            self.data.append((r, p))
        self.train()
        self.data = []

    def train(self):
        self.optimizer.zero_grad()
        R = 0
        loss = []
        for r, p in self.data[::-1]:
            R = r + 0.9 * R
            loss.append(R * torch.log(p))
        loss = -1 * torch.mean(torch.stack(loss))
        loss.backward()
        self.optimizer.step()
        print("step", loss.item(), policy.fc1.weight[0, 0].item())


policy = Policy()
with torch.no_grad():
    policy.fc1.weight.copy_(torch.linspace(-0.6, 0.7, 32).reshape(8, 4))
    policy.fc1.bias.copy_(torch.linspace(-0.1, 0.2, 8))
    policy.fc2.weight.copy_(torch.linspace(0.5, -0.4, 16).reshape(2, 8))
    policy.fc2.bias.zero_()
agent = Agent(policy, lr=0.05)
for episode in range(6):
    agent.run_episode(np.array([0.1, -0.2, 0.05 * episode, 0.3]))
'''

# the same class through a module-level helper returning (action, log_prob) from a Categorical, the log-probs
# appended to a plain list and stacked in an update function; and a helper returning the log-prob alone
HELPER_RETURNS = '''
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

rng = np.random.RandomState(1)
policy = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 3), nn.Softmax(dim=-1))
with torch.no_grad():
    policy[0].weight.copy_(torch.linspace(-0.5, 0.6, 18).reshape(6, 3))
    policy[0].bias.fill_(0.05)
    policy[2].weight.copy_(torch.linspace(0.4, -0.3, 18).reshape(3, 6))
    policy[2].bias.zero_()
optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)


def act(net, state):
    probs = net(torch.from_numpy(state))
    m = Categorical(probs)
    action = torch.tensor(int(np.searchsorted(np.cumsum(probs.detach().numpy()), rng.rand())))
    return action.item(), m.log_prob(action)


def log_prob_of(net, state, action):
    out = net(torch.from_numpy(state))
    return torch.log(out[action])


def update(log_probs, rewards, extra):
    returns = torch.tensor(np.cumsum(rewards[::-1])[::-1].copy(), dtype=torch.float32)
    loss = -(torch.stack(log_probs) * returns).sum() - 0.1 * torch.stack(extra).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


for episode in range(5):
    state = np.array([0.2, -0.1, 0.05 * episode], dtype=np.float32)
    log_probs, rewards, extra = [], [], []
    for t in range(5):
        action, log_prob = act(policy, state)
        log_probs.append(log_prob)
        lp = log_prob_of(policy, state, (action + 1) % 3)
        extra.append(lp)
        rewards.append(1.0 if action == t % 3 else -0.5)
        state = (state * 0.8 + np.array([0.1, 0.2, -0.1], dtype=np.float32) * action).astype(np.float32)
    print("step", update(log_probs, rewards, extra), policy[0].weight[1, 2].item())
'''


def _tracks(source, name, n):
    code = _convert(source)
    assert "import torch" not in code, code
    t, m = _losses(source, "torch_" + name), _losses(code, "ms_" + name)
    assert len(t) == n and [len(r) for r in m] == [len(r) for r in t], (t, m, code)
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=2e-5, atol=1e-6)
    return code


def test_a_value_the_loss_needs_returned_by_a_helper_in_a_tuple_and_collected_by_its_caller():
    """hiddenbeginner/reinforce (fresh17, open: "no parameter reaches the loss"): `probs[a]`, computed from the
    policy in select_action() and returned in the (action, probs[a]) pair, was collected by run_episode()
    (`self.data.append((r, p))`) and never recorded: forward_fn's loss read constants. A helper whose result a caller
    binds and then appends to a container now records each returned value computed from a model call, with its
    slice of the helper (the action drawn there is an input: computing the caller's line again would draw again),
    and the runtime computes again recorded values held in the tuples of a list."""
    code = _tracks(AGENT_TUPLE_RETURN, "agent_tuple_return", 6)
    assert "return a, mp_train.record(probs[a]" in code, code


def test_log_probs_returned_by_module_level_helpers_alone_or_in_a_pair():
    code = _tracks(HELPER_RETURNS, "helper_returns", 5)
    assert "return action.item(), mp_train.record(m.log_prob(action)" in code, code
    assert "return mp_train.record(ops.log(out[action])" in code or "return mp_train.record(mp_math.log(" in code, \
        code


# the rule's own shape (log-probabilities appended where they are computed) in a file whose initial weights are set
# in a `with torch.no_grad():` block before the helpers are defined
AFTER_A_NO_GRAD_BLOCK = '''
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

policy = nn.Sequential(nn.Linear(2, 5), nn.ReLU(), nn.Linear(5, 2), nn.Softmax(dim=-1))
with torch.no_grad():
    policy[0].weight.copy_(torch.linspace(-0.7, 0.8, 10).reshape(5, 2))
    policy[0].bias.fill_(0.1)
    policy[2].weight.copy_(torch.linspace(0.3, -0.6, 10).reshape(2, 5))
    policy[2].bias.zero_()
optimizer = torch.optim.Adam(policy.parameters(), lr=0.05)
rng = np.random.RandomState(3)


def select_action(state, saved):
    probs = policy(torch.from_numpy(state))
    m = Categorical(probs)
    action = torch.tensor(int(rng.rand() < probs[1].item()))
    saved.append(m.log_prob(action))
    return action.item()


def finish(saved, rewards):
    loss = -(torch.stack(saved) * torch.tensor(rewards)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


for episode in range(5):
    saved, rewards = [], []
    state = np.array([0.3, -0.2 + 0.1 * episode], dtype=np.float32)
    for t in range(4):
        a = select_action(state, saved)
        rewards.append(1.0 if a == 1 else 0.2)
        state = (state + (0.1 if a else -0.1)).astype(np.float32)
    print("step", finish(saved, rewards), policy[0].weight[2, 1].item())
'''


def test_values_collected_after_a_no_grad_block_are_still_recorded():
    """Found with the helper returns: RecordedValueTransform counted `with torch.no_grad():` blocks up in visit_With
    and down in leave_With, but the engine stops the later rules' leave hooks of a statement an earlier rule
    rewrote (TensorIdiomTransform flattens the no_grad block), so the count stayed open: after a no_grad block that
    set the initial weights, nothing in the rest of the file was recorded ("no parameter reaches the loss"). The
    count now opens and closes with the block's body (IndentedBlock hooks run for every rule)."""
    code = _tracks(AFTER_A_NO_GRAD_BLOCK, "after_a_no_grad_block", 5)
    assert "saved.append(mp_train.record(m.log_prob(action)" in code, code


# vltkv/Generate-faces-with-GAN training.py's shape: the D step's losses come from an if/else block (a helper
# returning the loss, a score and the labels), and the G step reads a name that block binds (the labels; vltkv's
# reads `real_label` from its mixup branch), so the general region runs the block again inside G's forward_fn
GAN_RERUN = '''
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
D = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1), nn.Sigmoid())
with torch.no_grad():
    for net, lo, hi in ((G, -0.5, 0.6), (D, 0.4, -0.7)):
        for layer in net:
            if isinstance(layer, nn.Linear):
                layer.weight.copy_(torch.linspace(lo, hi, layer.weight.numel()).reshape(layer.weight.shape))
                layer.bias.fill_(0.05)
optD = torch.optim.Adam(D.parameters(), lr=0.05, betas=(0.5, 0.999))
optG = torch.optim.Adam(G.parameters(), lr=0.05, betas=(0.5, 0.999))
criterion = nn.BCELoss()
real = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)
use_smooth = False


def discriminator_loss(netD, real_x, fake_x):
    real_label = torch.full((real_x.size(0),), 1.0)
    real_output = netD(real_x).view(-1)
    fake_output = netD(fake_x.detach()).view(-1)
    d_loss = criterion(real_output, real_label) + criterion(fake_output, torch.zeros_like(real_label))
    return d_loss, real_output.mean().item(), real_label


for step in range(6):
    D.zero_grad()
    noise = torch.linspace(-1.0, 1.0, 8).reshape(4, 2) * (1 + 0.1 * step)
    fake = G(noise)
    if use_smooth:
        d_loss, real_score, label = discriminator_loss(D, real, fake)
        d_loss = d_loss * 0.9
    else:
        d_loss, real_score, label = discriminator_loss(D, real, fake)
    d_loss.backward()
    optD.step()

    G.zero_grad()
    g_loss = criterion(D(fake).view(-1), label)
    g_loss.backward()
    optG.step()
    print("step", d_loss.item(), g_loss.item(), real_score)
'''


def test_names_a_rerun_d_block_binds_keep_the_values_of_the_d_step():
    """vltkv/dcgan (fresh17 open: runs and learns, Loss_D 0.357 apart against float32 controls of 2.9e-4): the G
    step's forward_fn runs the D step's if/else block again (it binds the `fake`/labels the G loss reads) after
    optimizerD.step(), and handed back `d_loss` and the scores it computed there: the script printed D's loss on the
    updated discriminator (one step later than torch's). Names only statements an earlier forward_fn ran bind are no
    longer handed back (torch ran those statements once). Both branches of the block (the flag as written and
    flipped)."""
    for flag in ("False", "True"):
        source = GAN_RERUN.replace("use_smooth = False", f"use_smooth = {flag}")
        code = _tracks(source, "gan_rerun_" + flag, 6)
        assert "return g_loss\n" in code, code
