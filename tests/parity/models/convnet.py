"""A small CNN touching most layers whose MindSpore defaults differ from torch's."""
import torch
import torch.nn as nn


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.act = nn.GELU()
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.leaky = nn.LeakyReLU()
        self.ln = nn.LayerNorm(6)
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(8 * 6 * 6, num_classes)

    def forward(self, x):
        x = self.pool(self.act(self.bn1(self.conv1(x))))
        x = self.leaky(self.avg(self.conv2(x)))
        x = self.ln(x)
        return self.fc(self.drop(torch.flatten(x, 1)))
