"""GRU encoder/decoder pair with a linear bridge; the decoder starts from the encoder's final state."""
import torch
import torch.nn as nn


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab=20, tgt_vocab=18, emb=8, hidden=12):
        super().__init__()
        self.src_embed = nn.Embedding(src_vocab, emb)
        self.tgt_embed = nn.Embedding(tgt_vocab, emb)
        self.encoder = nn.GRU(emb, hidden, batch_first=True)
        self.bridge = nn.Linear(hidden, hidden)
        self.decoder = nn.GRU(emb, hidden, batch_first=True)
        self.generator = nn.Linear(hidden, tgt_vocab)

    def forward(self, src, tgt):
        _, h = self.encoder(self.src_embed(src))
        h = torch.tanh(self.bridge(h))
        out, _ = self.decoder(self.tgt_embed(tgt), h)
        return self.generator(out)
