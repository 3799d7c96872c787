"""A model with a call the converter cannot convert faithfully (torch.cdist with a compute_mode MindSpore lacks): it keeps the torch line and
flags it with a `# mindport:` comment."""
import torch
from torch import nn


class Flagged(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        h = self.fc1(x)
        h = h * torch.cdist(h, x, compute_mode="donot_use_mm_for_euclid_dist").sum()
        return self.fc2(h)
