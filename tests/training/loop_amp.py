"""Mixed precision: autocast around the forward pass, GradScaler around backward/step (with unscale_ + clipping)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.sigmoid(self.fc1(x)))


def train(model, X, Y, epochs=5, use_amp=False):
    loader = DataLoader(TensorDataset(X, Y), batch_size=16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    losses = []
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=use_amp):
                out = model(x)
                loss = ((out - y) ** 2).mean()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
    return losses
