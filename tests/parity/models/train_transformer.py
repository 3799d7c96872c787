"""A two-layer transformer encoder language model, for the training-parity check."""
from torch import nn


class TinyEncoder(nn.Module):
    def __init__(self, vocab=40, dim=16, heads=2, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.norm(self.encoder(self.embed(tokens))))
