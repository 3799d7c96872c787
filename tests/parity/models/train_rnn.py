"""A GRU over a sequence with a linear head on every step, for the training-parity check."""
from torch import nn


class SeqGRU(nn.Module):
    def __init__(self, features=6, hidden=12, out=3):
        super().__init__()
        self.rnn = nn.GRU(features, hidden, num_layers=1, batch_first=True)
        self.head = nn.Linear(hidden, out)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.head(h)
