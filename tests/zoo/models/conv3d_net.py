"""Volumetric conv net: Conv3d + BatchNorm3d, global pooling by mean over the spatial dims."""
import torch
import torch.nn as nn


class Conv3DNet(nn.Module):
    def __init__(self, classes=2):
        super().__init__()
        self.conv1 = nn.Conv3d(1, 4, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm3d(4)
        self.conv2 = nn.Conv3d(4, 8, kernel_size=3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm3d(8)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = x.mean(dim=(2, 3, 4))
        return self.fc(x)
