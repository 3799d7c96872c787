"""Linear regression at module level: the model, optimizer and data are globals, a train(epoch) function does one
step (loss computed, then zero_grad, backward, step) and a while loop calls it."""
import torch
from torch import nn

model = None
optimizer = None
criterion = nn.MSELoss()
losses = []


class LinearRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 1)

    def forward(self, x):
        return self.linear(x)


def setup(net, X, Y):
    global model, optimizer, x_train, y_train
    model = net
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x_train = torch.from_numpy(X)
    y_train = torch.from_numpy(Y)


def train(epoch):
    model.train()
    out = model(x_train)
    loss = criterion(out, y_train)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 5 == 0:
        print("Epoch[{}], loss: {:.6f}".format(epoch + 1, loss.item()))
    losses.append(loss.item())


def run(net, X, Y, epochs=20):
    setup(net, X, Y)
    epoch = 0
    while epoch < epochs:
        train(epoch)
        epoch += 1
    return losses
