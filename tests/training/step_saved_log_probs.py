"""A policy-gradient episode as tutorials write it: log-probabilities saved in a list while acting (in a helper), the
loss built from them after the episode (in another helper). torch's graph spans the whole episode. The action is drawn
with numpy from the policy's probabilities (``rng``), so both frameworks take the same actions."""
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


def select_action(policy, state, rng):
    probs = policy(torch.from_numpy(state).unsqueeze(0))
    m = Categorical(probs)
    action = torch.tensor([int(rng.random() < probs[0, 1].item())])
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


def train(policy, episodes=8, steps=6):
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    losses = []
    for episode in range(episodes):
        for t in range(steps):
            state = rng.standard_normal(4).astype(np.float32)
            action = select_action(policy, state, rng)
            policy.rewards.append(float(action == (state[0] > 0)))
        losses.append(finish_episode(policy, optimizer))
    return losses
