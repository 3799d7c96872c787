"""MobileNet-style depthwise-separable convs with ReLU6 and a global average pool."""
import torch.nn as nn


def dw_separable(inp, out, stride):
    return nn.Sequential(
        nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
        nn.BatchNorm2d(inp),
        nn.ReLU6(inplace=True),
        nn.Conv2d(inp, out, 1, 1, 0, bias=False),
        nn.BatchNorm2d(out),
        nn.ReLU6(inplace=True),
    )


class TinyMobileNet(nn.Module):
    def __init__(self, classes=7):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU6(inplace=True),
            dw_separable(8, 16, 1),
            dw_separable(16, 24, 2),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(24, classes))

    def forward(self, x):
        x = self.pool(self.features(x))
        x = x.view(x.size(0), -1)
        return self.classifier(x)
