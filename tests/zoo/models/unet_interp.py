"""U-Net style decoder that up-samples with F.interpolate and nn.Upsample instead of transposed convs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class UpsampleNet(nn.Module):
    def __init__(self, ch=6):
        super().__init__()
        self.enc1 = nn.Conv2d(3, ch, 3, padding=1)
        self.enc2 = nn.Conv2d(ch, ch * 2, 3, stride=2, padding=1)
        self.enc3 = nn.Conv2d(ch * 2, ch * 2, 3, stride=2, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec2 = nn.Conv2d(ch * 4, ch, 3, padding=1)
        self.dec1 = nn.Conv2d(ch * 2, 1, 3, padding=1)

    def forward(self, x):
        e1 = F.relu(self.enc1(x))
        e2 = F.relu(self.enc2(e1))
        e3 = F.relu(self.enc3(e2))
        d2 = F.relu(self.dec2(torch.cat((self.up(e3), e2), 1)))
        d1 = F.interpolate(d2, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.dec1(torch.cat((d1, e1), 1)))
