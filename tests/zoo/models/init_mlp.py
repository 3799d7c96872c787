"""An MLP whose __init__ runs a custom init loop (xavier/zeros via torch.nn.init) and self.apply()."""
import torch.nn as nn
from torch.nn import init


def _init_weights(m):
    if isinstance(m, nn.Linear):
        init.xavier_uniform_(m.weight)
        if m.bias is not None:
            init.zeros_(m.bias)


class InitMLP(nn.Module):
    def __init__(self, sizes=(10, 20, 20, 4)):
        super().__init__()
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.body = nn.Sequential(*layers[:-1])
        self.apply(_init_weights)
        for name, m in self.named_modules():
            if isinstance(m, nn.Linear) and name.endswith("0"):
                init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, x):
        return self.body(x)
