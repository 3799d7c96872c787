"""Elman RNN language model with tied-free decoder; reshapes with view/size."""
import torch
import torch.nn as nn


class RNNLanguageModel(nn.Module):
    def __init__(self, vocab=30, emb=8, hidden=16, layers=2):
        super().__init__()
        self.encoder = nn.Embedding(vocab, emb)
        self.rnn = nn.RNN(emb, hidden, layers, nonlinearity="tanh")
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        x = self.encoder(tokens)          # (seq, batch, emb): not batch_first
        output, hidden = self.rnn(x)
        logits = self.decoder(output.view(-1, output.size(2)))
        return logits.view(output.size(0), output.size(1), -1)
