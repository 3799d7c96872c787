"""Transformer encoder layer built from nn.MultiheadAttention (batch_first), LayerNorm and a GELU FFN."""
import torch
from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, d_model=16, nhead=2, dim_ff=32, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_ff)
        self.linear2 = nn.Linear(dim_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.act = nn.GELU()

    def forward(self, src):
        attn, _ = self.self_attn(src, src, src)
        src = self.norm1(src + self.drop(attn))
        ff = self.linear2(self.drop(self.act(self.linear1(src))))
        return self.norm2(src + self.drop(ff))


class Encoder(nn.Module):
    def __init__(self, vocab=64, d_model=16, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([EncoderLayer(d_model) for _ in range(layers)])
        self.head = nn.Linear(d_model, 3)

    def forward(self, tokens):
        h = self.tok(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.head(h.mean(dim=1))
