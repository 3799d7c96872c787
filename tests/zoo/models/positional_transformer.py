"""Sinusoidal positional encoding kept as a buffer, added to token embeddings, then a LayerNorm'd MLP head."""
import math

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class PosTransformer(nn.Module):
    def __init__(self, vocab=32, d_model=16, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = PositionalEncoding(d_model)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, classes)
        self.scale = math.sqrt(d_model)

    def forward(self, tokens):
        x = self.pos(self.embed(tokens) * self.scale)
        return self.head(self.norm(x)).sum(dim=1)
