"""Loop with a scheduler: SGD with momentum, StepLR stepped per epoch, TensorDataset + DataLoader, torch.save."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def train(model, X, Y, epochs=5):
    loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    losses = []
    model.train()
    for epoch in range(epochs):
        # one pass over the data
        for x, y in loader:
            optimizer.zero_grad()
            out = model(x)
            loss = ((out - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    torch.save(model.state_dict(), "/tmp/mindport_plain.ckpt")
    return losses
