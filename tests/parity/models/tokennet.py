"""A tiny token model built by a factory function from a config object (--ctor "Config(dim=16)")."""
import torch
import torch.nn as nn


class Config:
    def __init__(self, vocab=100, dim=32):
        self.vocab = vocab
        self.dim = dim


class TokenNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.Sequential(nn.Linear(cfg.dim, cfg.dim), nn.GELU(), nn.LayerNorm(cfg.dim))
        self.head = nn.Linear(cfg.dim, cfg.vocab, bias=False)

    def forward(self, ids):
        h = self.embed(ids)
        h = h + self.blocks(h)
        return self.head(h)


def tiny_lm(cfg):
    return TokenNet(cfg)
