"""A deterministic MindSpore classifier (no dropout, no batch statistics) for the data-parallel scaffold test."""
from mindspore import nn


class Classifier(nn.Cell):
    def __init__(self, num_classes=4):
        super().__init__()
        self.hidden = nn.Dense(16, 8)
        self.out = nn.Dense(8, num_classes)

    def construct(self, x):
        return self.out(nn.Tanh()(self.hidden(x)))
