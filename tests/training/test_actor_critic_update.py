"""Session 38 (issues 27/29): an actor-critic update met on first contact with Han-Adam/DRL-Pytorch-Tutorial (TD3, DDPG,
SAC agents).
Real torch and real MindSpore; expected values are torch's, run here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

# An actor-critic agent's update as the TD3/DDPG tutorials write it: a batch drawn from a replay buffer (a method of
# an attribute), the critic's target computed under no_grad from target networks, the critic's loss, then the
# actor's update inside ``if self.train_it % self.policy_freq == 0:`` and soft target updates through ``.data``.
TD3_AGENT = '''
import copy
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Actor(nn.Module):
    def __init__(self, s_dim, a_dim, hidden):
        super().__init__()
        self.l1 = nn.Linear(s_dim, hidden)
        self.l2 = nn.Linear(hidden, a_dim)

    def forward(self, s):
        return torch.tanh(self.l2(F.relu(self.l1(s))))


class Critic(nn.Module):
    def __init__(self, s_dim, a_dim, hidden):
        super().__init__()
        self.q1 = nn.Linear(s_dim + a_dim, hidden)
        self.q1_out = nn.Linear(hidden, 1)
        self.q2 = nn.Linear(s_dim + a_dim, hidden)
        self.q2_out = nn.Linear(hidden, 1)

    def forward(self, s, a):
        sa = torch.cat([s, a], dim=1)
        return self.q1_out(F.relu(self.q1(sa))), self.q2_out(F.relu(self.q2(sa)))


class ReplayBuffer:
    def __init__(self, s_dim, a_dim, capacity, batch_size):
        rng = np.random.RandomState(0)
        self.s = rng.uniform(-1, 1, (capacity, s_dim)).astype(np.float32)
        self.a = rng.uniform(-1, 1, (capacity, a_dim)).astype(np.float32)
        self.s_ = rng.uniform(-1, 1, (capacity, s_dim)).astype(np.float32)
        self.r = rng.uniform(0, 1, (capacity, 1)).astype(np.float32)
        self.done = (rng.uniform(0, 1, (capacity, 1)) < 0.2).astype(np.float32)
        self.rng = np.random.RandomState(1)
        self.capacity, self.batch_size = capacity, batch_size

    def get_sample(self):
        index = self.rng.choice(self.capacity, self.batch_size)
        return (torch.FloatTensor(self.s[index]), torch.FloatTensor(self.a[index]), torch.FloatTensor(self.s_[index]),
                torch.FloatTensor(self.r[index]), torch.FloatTensor(self.done[index]))


def fill(net, start):
    with torch.no_grad():
        for k, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(start - 0.1 * k, -start + 0.05 * k, p.numel()).reshape(p.shape))


class TD3:
    def __init__(self, s_dim, a_dim, hidden):
        self.gamma, self.tau, self.policy_freq, self.train_it = 0.9, 0.1, 2, 0
        self.actor = Actor(s_dim, a_dim, hidden)
        fill(self.actor, 0.5)
        self.actor_target = copy.deepcopy(self.actor)
        self.opt_actor = torch.optim.Adam(self.actor.parameters(), lr=0.01)
        self.critic = Critic(s_dim, a_dim, hidden)
        fill(self.critic, 0.4)
        self.critic_target = copy.deepcopy(self.critic)
        self.opt_critic = torch.optim.Adam(self.critic.parameters(), lr=0.01)
        self.memory = ReplayBuffer(s_dim, a_dim, 64, 8)

    def learn(self):
        self.train_it += 1
        s, a, s_, r, done = self.memory.get_sample()

        with torch.no_grad():
            a_ = torch.clip(self.actor_target(s_), -1., 1.)
            target_Q1, target_Q2 = self.critic_target(s_, a_)
            target_Q = torch.min(target_Q1, target_Q2)
            td_target = r + (1 - done) * self.gamma * target_Q

        q1, q2 = self.critic(s, a)
        critic_loss = F.mse_loss(q1, td_target) + F.mse_loss(q2, td_target)
        self.opt_critic.zero_grad()
        critic_loss.backward()
        self.opt_critic.step()

        if self.train_it % self.policy_freq == 0:
            q1, q2 = self.critic(s, self.actor(s))
            actor_loss = -torch.mean(torch.min(q1, q2))
            self.opt_actor.zero_grad()
            actor_loss.backward()
            self.opt_actor.step()
            print("step", critic_loss.item(), actor_loss.item())
            self.soft_update(self.critic_target, self.critic)
            self.soft_update(self.actor_target, self.actor)

    def soft_update(self, target, source):
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.data.copy_(target_param.data * (1.0 - self.tau) + param.data * self.tau)


agent = TD3(3, 2, 8)
for it in range(8):
    agent.learn()
'''


def test_a_no_grad_target_between_a_sampled_batch_and_the_critic_loss_runs_inside_the_step():
    """Before: the converter crashed on the file (MP299: the recorded-values rule read a statement the training rule
    had moved: TypeError 'IndentedBlock' object is not subscriptable), and the region planner moved the no_grad block
    after the step's call (forward_fn read ``td_target`` unbound); the replay buffer's ``get_sample()`` (a method of an
    attribute) was taken for a model call whose value is computed again inside the actor's differentiation."""
    code = _convert(TD3_AGENT)
    assert "td_target" in code.split("def forward_fn")[1].split("grad_fn")[0]
    t, m = _losses(TD3_AGENT, "torch_td3"), _losses(code, "ms_td3")
    assert len(t) == 4 and len(m) == 4
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-4, atol=1e-6)
