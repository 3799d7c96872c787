"""Kim-style text CNN: embedding, parallel Conv1d branches, max-over-time pooling, concatenation."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TextCNN(nn.Module):
    def __init__(self, vocab=60, emb=12, filters=6, sizes=(2, 3, 4), classes=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.convs = nn.ModuleList([nn.Conv1d(emb, filters, k) for k in sizes])
        self.fc = nn.Linear(filters * len(sizes), classes)

    def forward(self, tokens):
        x = self.embedding(tokens).permute(0, 2, 1)
        pooled = []
        for conv in self.convs:
            h = F.relu(conv(x))
            pooled.append(torch.max(h, dim=2)[0])
        return self.fc(torch.cat(pooled, dim=1))
