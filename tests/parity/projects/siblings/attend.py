"""Attention as its own module; it imports its sibling `net` back (a cycle, resolved at call time)."""
import net
import torch
from torch import nn


class Attend(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** -0.5

    def forward(self, q, k, v):
        attn = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * self.scale * net.TEMPERATURE, dim=-1)
        return torch.matmul(attn, v)
