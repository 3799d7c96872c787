"""A loss summed over several steps in Python (``loss = loss + criterion(...)``) with one backward every four
steps: torch's graph holds the four forward passes, so the gradient is that of the sum."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def fit(model, X, Y, epochs=3, every=4, batch=4):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    crit = nn.MSELoss()
    X, Y = torch.from_numpy(X), torch.from_numpy(Y)
    losses = []
    for epoch in range(epochs):
        loss = 0
        for i in range(0, len(X), batch):
            loss = loss + crit(model(X[i:i + batch]), Y[i:i + batch])
            if (i // batch + 1) % every == 0:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                loss = 0
    return losses
