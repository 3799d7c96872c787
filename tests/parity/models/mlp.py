"""A plain MLP: three Linear layers."""
from torch import nn


class MLP(nn.Module):
    def __init__(self, dim=6, hidden=16, out=4):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out)

    def forward(self, x):
        x = self.act(self.fc1(x))
        x = self.act(self.fc2(x))
        return self.fc3(x)
