"""Upsampling and a softmax over channels."""
import torch.nn as nn


class UpNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.up = nn.Upsample(size=(16, 16), mode="bilinear", align_corners=True)
        self.head = nn.Conv2d(4, 4, 1)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        return self.softmax(self.head(self.up(self.conv(x))))
