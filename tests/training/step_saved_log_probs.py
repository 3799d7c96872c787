"""A policy-gradient episode as tutorials write it: log-probabilities saved in a list while acting, the loss built
from them after the episode. torch's graph spans the whole episode; the converted step cannot reach it."""
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)


def select_action(policy, state):
    probs = policy(torch.from_numpy(state).unsqueeze(0))
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode(policy, optimizer, gamma=0.99):
    R = 0
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    policy_loss = [-log_prob * R for log_prob, R in zip(policy.saved_log_probs, returns)]
    optimizer.zero_grad()
    loss = torch.cat(policy_loss).sum()
    loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return loss.item()


def train(policy, episodes=2, steps=5):
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    for episode in range(episodes):
        for t in range(steps):
            select_action(policy, rng.standard_normal(4).astype(np.float32))
            policy.rewards.append(1.0)
        finish_episode(policy, optimizer)
