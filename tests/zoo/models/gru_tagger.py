"""Sequence tagger: bidirectional GRU over embeddings, a tag score per token."""
from torch.nn import GRU, Embedding, Linear, Module
from torch.nn import functional as F


class GRUTagger(Module):
    def __init__(self, vocab_size=40, embed_dim=12, hidden=10, num_tags=5):
        super().__init__()
        self.embed = Embedding(vocab_size, embed_dim)
        self.gru = GRU(embed_dim, hidden, batch_first=True, bidirectional=True)
        self.proj = Linear(2 * hidden, num_tags)

    def forward(self, tokens):
        states, _ = self.gru(self.embed(tokens))
        return F.log_softmax(self.proj(states), dim=-1)
