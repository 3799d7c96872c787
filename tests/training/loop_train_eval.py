"""A train/validate function pair on a small conv net, with accuracy counting and a checkpoint."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class ConvNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4 * 4 * 4, classes)

    def forward(self, x):
        return self.fc(self.flat(self.pool(torch.relu(self.conv(x)))))


def train_one_epoch(model, loader, optimizer, criterion, losses):
    model.train()
    for images, labels in loader:
        optimizer.zero_grad()
        logits = model(images)
        loss = criterion(logits, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())


def validate(model, loader):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images)
            correct += (logits.argmax(1) == labels).sum().item()
            total += labels.shape[0]
    return correct / total


def train(model, X, Y, criterion, epochs=5):
    train_loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=False)
    val_loader = DataLoader(TensorDataset(X, Y), batch_size=32)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, accuracies = [], []
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer, criterion, losses)
        accuracies.append(validate(model, val_loader))
    return losses, accuracies
