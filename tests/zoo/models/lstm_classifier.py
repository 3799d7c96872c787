"""Text classifier: embedding -> 2-layer LSTM (batch_first) -> last hidden state -> linear."""
import torch
import torch.nn as nn


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size=50, embed_dim=16, hidden_dim=24, num_classes=4):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden_dim, num_layers=2, batch_first=True)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(hidden_dim, num_classes)

    def forward(self, tokens):
        emb = self.dropout(self.embedding(tokens))
        output, (h_n, c_n) = self.lstm(emb)
        last = h_n[-1]
        return self.fc(last)
