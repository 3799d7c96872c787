"""Dense block: each layer sees the concatenation of all earlier feature maps; transition with AvgPool2d."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseLayer(nn.Module):
    def __init__(self, in_ch, growth):
        super().__init__()
        self.norm = nn.BatchNorm2d(in_ch)
        self.conv = nn.Conv2d(in_ch, growth, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        return self.conv(F.relu(self.norm(x)))


class DenseNetTiny(nn.Module):
    def __init__(self, growth=4, layers=3, classes=6):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.block = nn.ModuleList()
        ch = 8
        for i in range(layers):
            self.block.append(DenseLayer(ch, growth))
            ch += growth
        self.transition = nn.Sequential(nn.BatchNorm2d(ch), nn.ReLU(), nn.Conv2d(ch, ch // 2, 1), nn.AvgPool2d(2))
        self.fc = nn.Linear(ch // 2, classes)

    def forward(self, x):
        features = [self.stem(x)]
        for layer in self.block:
            features.append(layer(torch.cat(features, 1)))
        x = self.transition(torch.cat(features, 1))
        x = F.adaptive_avg_pool2d(x, (1, 1))
        return self.fc(x.view(x.size(0), -1))
