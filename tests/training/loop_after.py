"""Values computed in the step and read after the loop (the last output, the clipped norm)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def train(model, X, Y, epochs=5, max_norm=0.5):
    loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=False, drop_last=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    losses = []
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            out = model(x)
            loss = ((out - y) ** 2).mean()
            loss.backward()
            total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
            losses.append(loss.item())
        losses.append(float(total))  # the norm before clipping, as torch returns it
    losses.append(float(out.sum()))  # the last step's output, read after the loop
    return losses
