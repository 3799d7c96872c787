"""A train_step function with AMP as written for a GPU (GradScaler, autocast) run on a CPU, where torch disables
both: the scaled loss's backward, unscale_, the returned gradient norm of clip_grad_norm_, scaler.step/update."""
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def train_step(model, optimizer, scaler, x, y):
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.amp.autocast():
        out = model(x)
        loss = nn.functional.mse_loss(out, y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    scaler.step(optimizer)
    scaler.update()
    return loss.item(), float(norm)


def train(model, X, Y, epochs=4, batch=16):
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    scaler = torch.cuda.amp.GradScaler()
    losses = []
    for epoch in range(epochs):
        for i in range(0, len(X), batch):
            x, y = torch.from_numpy(X[i:i + batch]), torch.from_numpy(Y[i:i + batch])
            loss, norm = train_step(model, optimizer, scaler, x, y)
            losses += [loss, norm]
    return losses
