from torch import nn

from xt.blocks import Block

from .blocks import SCALE


class Net(nn.Module):
    def __init__(self, dim=8, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 3)

    def forward(self, x):
        for block in self.blocks:
            x = block(x) * SCALE
        return self.head(x)
