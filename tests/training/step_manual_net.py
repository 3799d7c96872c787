"""A two-layer network written by hand: the weights are tensors made with requires_grad=True and trained without an
optimizer (updates under no_grad, gradients zeroed by hand); the loss is printed between the forward pass and
backward()."""
import torch


def train(X, Y, W1, W2, steps=20, learning_rate=4e-3):
    x = torch.from_numpy(X)
    y = torch.from_numpy(Y)
    w1 = torch.tensor(W1, requires_grad=True)
    w2 = torch.tensor(W2, requires_grad=True)
    losses = []
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        loss = (y_pred - y).pow(2).sum()
        if t % 5 == 4:
            print(t, loss.item())
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return losses
