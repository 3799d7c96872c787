"""A step-by-step decoder: LSTMCell unrolled in a Python loop, outputs stacked over time."""
import torch
import torch.nn as nn


class CellDecoder(nn.Module):
    def __init__(self, inp=6, hidden=10, out=3):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.LSTMCell(inp, hidden)
        self.out = nn.Linear(hidden, out)

    def forward(self, x):
        batch, steps, _ = x.shape
        h = torch.zeros(batch, self.hidden)
        c = torch.zeros(batch, self.hidden)
        outputs = []
        for t in range(steps):
            h, c = self.cell(x[:, t, :], (h, c))
            outputs.append(self.out(h))
        return torch.stack(outputs, dim=1)
