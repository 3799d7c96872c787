"""GroupNorm, LeakyReLU, PReLU and Dropout in a small conv net."""
import torch.nn as nn


class GroupNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.GroupNorm(2, 8),
            nn.LeakyReLU(0.1),
            nn.Conv2d(8, 8, 3, padding=1),
            nn.GroupNorm(4, 8),
            nn.PReLU(),
            nn.Dropout(0.5),
            nn.AvgPool2d(2),
        )
        self.head = nn.Linear(8 * 4 * 4, 3)

    def forward(self, x):
        x = self.body(x)
        return self.head(x.reshape(x.shape[0], -1))
