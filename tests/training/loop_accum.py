"""Gradient accumulation: step every `accum_steps` micro-batches."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def train(model, X, Y, epochs=5, accum_steps=2):
    loader = DataLoader(TensorDataset(X, Y), batch_size=16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    optimizer.zero_grad()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            out = model(x)
            loss = ((out - y) ** 2).mean() / accum_steps
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
            losses.append(loss.item() * accum_steps)
    return losses
