"""Lazy layers (torch infers in_features / in_channels / num_features at the first call), trained with the optimizer
built after a dry run ``model(dummy)`` (``train``), or built before any forward (``make_optimizer`` then
``train_steps``: the sizes come from the first batch, or from weights loaded first)."""
import torch
import torch.nn as nn


class LazyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.LazyConv2d(4, 3, padding=1)
        self.bn = nn.LazyBatchNorm2d()
        self.up = nn.LazyConvTranspose2d(3, 2, stride=2)
        self.conv1 = nn.LazyConv1d(2, 3)
        self.norm1 = nn.LazyBatchNorm1d()
        self.head = nn.LazyLinear(1)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = self.up(x)
        x = x.flatten(2)
        x = self.norm1(self.conv1(x))
        return self.head(x.flatten(1))


def make_optimizer(model, kind="sgd"):
    if kind == "adam":
        return torch.optim.Adam(model.parameters(), lr=0.01)
    if kind == "momentum":
        return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return torch.optim.SGD(model.parameters(), lr=0.05)


def train_steps(model, optimizer, X, Y, steps=4):
    losses = []
    for step in range(steps):
        xb, yb = torch.as_tensor(X), torch.as_tensor(Y)
        optimizer.zero_grad()
        loss = ((model(xb) - yb) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


def train(model, X, Y, steps=4, kind="momentum"):
    model(torch.as_tensor(X[:2]))  # the dry run materialises the lazy layers
    optimizer = make_optimizer(model, kind)
    return train_steps(model, optimizer, X, Y, steps)
