"""Two heads on one trunk: the first loss's backward keeps the graph (retain_graph=True) for the second; the
gradients are checked (p.grad is None), their norm printed, accumulated over two batches and applied once."""
import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 16)
        self.head_a = nn.Linear(16, 1)
        self.head_b = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return self.head_a(h), self.head_b(h)


def train(model, X, Y, epochs=5, batch=16):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x_all, y_all = torch.from_numpy(X), torch.from_numpy(Y)
    losses = []
    for epoch in range(epochs):
        for i in range(0, len(x_all), batch):
            x, y = x_all[i:i + batch], y_all[i:i + batch]
            out_a, out_b = model(x)
            loss_a = ((out_a - y) ** 2).mean()
            loss_b = (out_b - 2 * y).abs().mean()
            loss_a.backward(retain_graph=True)
            loss_b.backward()
            missing = [name for name, p in model.named_parameters() if p.grad is None]
            assert not missing, missing
            if (i // batch) % 2 == 1:
                grad_norm = sum(float(p.grad.norm() ** 2) for p in model.parameters()) ** 0.5
                print(f"epoch {epoch} grad norm {grad_norm:.4f}")
                optimizer.step()
                optimizer.zero_grad()
            losses.append(loss_a.item() + loss_b.item())
    return losses
