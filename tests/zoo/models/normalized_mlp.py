"""Input normalisation kept in buffers (mean/std), then an MLP; the std buffer is non-persistent."""
import torch
import torch.nn as nn


class NormalizedMLP(nn.Module):
    def __init__(self, features=6, hidden=16, out=2):
        super().__init__()
        self.register_buffer("mean", torch.linspace(-1.0, 1.0, features))
        self.register_buffer("scale", torch.full((features,), 2.0))
        self.net = nn.Sequential(
            nn.Linear(features, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Sigmoid(),
            nn.Linear(hidden, out),
        )

    def forward(self, x):
        return self.net((x - self.mean) / self.scale)
