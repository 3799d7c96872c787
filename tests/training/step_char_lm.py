"""A character-level language model: embedding, GRU, linear decoder over the characters of a short text; the
hidden state is detached between chunks, zero_grad comes before the forward pass, the gradients are clipped and the
running loss is printed every few steps."""
import torch
from torch import nn

TEXT = "the quick brown fox jumps over the lazy dog and the dog sleeps while the fox runs far away. " * 3
CHARS = sorted(set(TEXT))


class CharModel(nn.Module):
    def __init__(self, vocab=len(CHARS), embed=8, hidden=16):
        super().__init__()
        self.encoder = nn.Embedding(vocab, embed)
        self.rnn = nn.GRU(embed, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)
        self.hidden_size = hidden

    def forward(self, x, hidden):
        output, hidden = self.rnn(self.encoder(x), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, batch):
        return torch.zeros(1, batch, self.hidden_size)


def encode(text):
    return torch.tensor([CHARS.index(c) for c in text], dtype=torch.long), len(CHARS)


def train(model, steps=20, seq_len=12, batch=2):
    data, vocab = encode(TEXT)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    hidden = model.init_hidden(batch)
    losses = []
    total_loss = 0.0
    span = (len(data) - 1) // batch
    for step in range(steps):
        start = (step * seq_len) % (span - seq_len)
        inputs = torch.stack([data[b * span + start:b * span + start + seq_len] for b in range(batch)])
        targets = torch.stack([data[b * span + start + 1:b * span + start + seq_len + 1] for b in range(batch)])
        hidden = hidden.detach()
        optimizer.zero_grad()
        output, hidden = model(inputs, hidden)
        loss = criterion(output.reshape(-1, output.size(-1)), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        total_loss += loss.item()
        if step % 5 == 4:
            print(f"step {step + 1} loss {total_loss / 5:.4f}")
            total_loss = 0.0
        losses.append(loss.item())
    return losses
