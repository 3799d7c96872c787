"""One sequence-to-sequence training step per pair, as tutorials write it: an encoder GRU run token by token, a
decoder fed its targets (teacher forcing), the loss summed over the target tokens (loss = 0; loss += ...), two
optimizers, and the step function returning the loss per token."""
import torch
from torch import nn

SOS = 0


class Encoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.hidden_size = hidden
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden)

    def forward(self, token, hidden):
        embedded = self.embedding(token).view(1, 1, -1)
        return self.gru(embedded, hidden)

    def init_hidden(self):
        return torch.zeros(1, 1, self.hidden_size)


class Decoder(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, token, hidden):
        output = torch.relu(self.embedding(token).view(1, 1, -1))
        output, hidden = self.gru(output, hidden)
        return self.softmax(self.out(output[0])), hidden


class Pair(nn.Module):
    def __init__(self, vocab=10, hidden=12):
        super().__init__()
        self.encoder = Encoder(vocab, hidden)
        self.decoder = Decoder(hidden, vocab)


def train_pair(source, target, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
    encoder_hidden = encoder.init_hidden()
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    loss = 0
    for ei in range(source.size(0)):
        encoder_output, encoder_hidden = encoder(source[ei], encoder_hidden)
    decoder_input = torch.tensor([[SOS]])
    decoder_hidden = encoder_hidden
    for di in range(target.size(0)):
        decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
        loss += criterion(decoder_output, target[di])
        decoder_input = target[di]
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item() / target.size(0)


def train(model, steps=12):
    encoder_optimizer = torch.optim.SGD(model.encoder.parameters(), lr=0.1)
    decoder_optimizer = torch.optim.SGD(model.decoder.parameters(), lr=0.1)
    criterion = nn.NLLLoss()
    pairs = [([1, 2, 3, 4], [4, 3, 2, 1]), ([5, 6, 7], [7, 6, 5]), ([2, 4, 6, 8], [8, 6, 4, 2])]
    losses = []
    for step in range(steps):
        src, tgt = pairs[step % len(pairs)]
        source = torch.tensor(src, dtype=torch.long).view(-1, 1)
        target = torch.tensor(tgt, dtype=torch.long).view(-1, 1)
        losses.append(train_pair(source, target, model.encoder, model.decoder, encoder_optimizer,
                                 decoder_optimizer, criterion))
    return losses
