"""REINFORCE as a paper repository writes it (a grid-world agent): the episode loop in train() samples actions from a
Categorical over the policy's output and appends each log-probability to a local list, stacks the list after the
episode and hands it to update_policy(), a helper that normalises nothing itself, builds the loss and steps Adam.
The action is drawn with numpy from the probabilities so both frameworks take the same actions."""
import numpy as np
import torch
import torch.distributions as distributions
import torch.nn as nn


class PolicyNet(nn.Module):
    def __init__(self, input_dim=3, hidden_dim=16, output_dim=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, output_dim))

    def forward(self, x):
        return self.net(x)


def calculate_returns(rewards, discount_factor, normalise=True):
    returns = []
    R = 0
    for r in reversed(rewards):
        R = r + R * discount_factor
        returns.insert(0, R)
    returns = torch.tensor(returns)
    if normalise:
        returns = (returns - returns.mean()) / (returns.std() + 1e-6)
    return returns


def update_policy(returns, action_log_probs, optimiser):
    returns = returns.detach()
    loss = - (returns * action_log_probs).sum()
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return loss.item()


def run_episode(policy, optimiser, rng, gamma=0.9, steps=8):
    policy.train()
    action_log_probs = []
    rewards = []
    state = rng.standard_normal(3).astype(np.float32)
    for i in range(steps):
        state = torch.tensor(state).float()
        pred = policy(state)
        action_probs = nn.Softmax(-1)(pred)
        p = distributions.Categorical(probs=action_probs)
        action = int(np.searchsorted(np.cumsum(action_probs.detach().numpy()), rng.random() * 0.999999))
        action_log_prob = p.log_prob(torch.tensor(action))
        reward = float(action == int(np.argmax(state.numpy())))
        state = rng.standard_normal(3).astype(np.float32)
        action_log_probs.append(action_log_prob)
        rewards.append(reward)
    action_log_probs = torch.stack(action_log_probs)
    R = calculate_returns(rewards, gamma)
    return update_policy(R, action_log_probs, optimiser)


def train(policy, episodes=10):
    optimiser = torch.optim.Adam(policy.parameters(), lr=0.01)
    rng = np.random.default_rng(1)
    return [run_episode(policy, optimiser, rng) for _ in range(episodes)]
