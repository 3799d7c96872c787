"""Outputs of every nesting kind: dict, tuple, namedtuple, dataclass."""
from collections import namedtuple
from dataclasses import dataclass

import torch
import torch.nn as nn

Pair = namedtuple("Pair", ["low", "high"])


@dataclass
class Extra:
    score: torch.Tensor
    count: int


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, y):
        h = self.fc(x)
        return {"logits": h, "pair": Pair(h.min(dim=1)[0], h.max(dim=1)[0]), "both": (h * 2, y + 1),
                "extra": Extra(h.sum(), 3)}
