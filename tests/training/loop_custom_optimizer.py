"""A hand-written optimizer (SGD with momentum and weight decay, state per parameter) driving the loop."""
import torch
from torch import nn
from torch.optim import Optimizer
from torch.utils.data import DataLoader, TensorDataset


class MomentumSGD(Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9, weight_decay=0.0):
        defaults = dict(lr=lr, momentum=momentum, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                state = self.state[p]
                if "buf" not in state:
                    state["buf"] = torch.clone(grad).detach()
                else:
                    state["buf"].mul_(group["momentum"]).add_(grad)
                p.add_(state["buf"], alpha=-group["lr"])
        return loss


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def train(model, X, Y, epochs=5):
    loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=False, drop_last=True)
    optimizer = MomentumSGD(model.parameters(), lr=0.05, momentum=0.8, weight_decay=1e-3)
    losses = []
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
