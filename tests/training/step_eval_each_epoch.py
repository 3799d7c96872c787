"""A tutorial's loop: the model called before zero_grad() and a print (the general backward region), an evaluation
with model.eval() after each epoch's batches and no model.train() anywhere. torch trains the first epoch in training
mode (a Module trains from birth) and the later ones in inference mode (BatchNorm on its running statistics)."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def fit(model, X, Y, epochs=3, batch=16):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    crit = nn.MSELoss()
    losses = []
    X, Y = torch.from_numpy(X), torch.from_numpy(Y)
    for epoch in range(epochs):
        for i in range(0, len(X), batch):
            out = model(X[i:i + batch])
            optimizer.zero_grad()
            loss = crit(out, Y[i:i + batch])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            losses.append(crit(model(X), Y).item())
    return losses
