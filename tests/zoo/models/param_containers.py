"""ParameterList / ModuleDict / register_parameter: per-branch scales and heads chosen by key."""
import torch
import torch.nn as nn


class ParamContainers(nn.Module):
    def __init__(self, features=5, branches=3):
        super().__init__()
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(features)) for _ in range(branches)])
        self.heads = nn.ModuleDict({"a": nn.Linear(features, 2), "b": nn.Linear(features, 2)})
        self.register_parameter("offset", nn.Parameter(torch.zeros(features)))

    def forward(self, x):
        h = x + self.offset
        for scale in self.scales:
            h = h * scale
        return self.heads["a"](h) - self.heads["b"](h)
