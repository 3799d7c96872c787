"""A vector-quantiser-like model: its second output, an auxiliary (commitment) loss, is 0 in eval mode whatever the
weights: constant by construction, not a hidden bug."""
import torch
from torch import nn


class AuxLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 4)

    def forward(self, x):
        y = self.proj(x)
        loss = torch.zeros(())
        if self.training:
            loss = loss + (y ** 2).mean()
        return y, loss


class Constant(nn.Module):
    """No parameter at all, and a constant output: nothing can re-check it."""

    def forward(self, x):
        return torch.zeros(3) + 1.0


class Permute(nn.Module):
    """No parameter and no floating point buffer (its permutation is an integer buffer); a permutation of the input
    and its log-determinant, 0 by construction (pytorch-flows' Shuffle): the constant output is the model's own,
    beside one that is not constant."""

    def __init__(self):
        super().__init__()
        self.register_buffer("perm", torch.tensor([2, 0, 1, 5, 4, 3]))

    def forward(self, x):
        return x[:, self.perm], torch.zeros(x.shape[0], 1)
