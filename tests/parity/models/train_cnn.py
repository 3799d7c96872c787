"""A small CNN classifier for the training-parity check."""
import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 12, 3, padding=1)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(12 * 4 * 4, num_classes)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc(self.drop(torch.flatten(x, 1)))
