"""Models whose eval forward draws random values: proven by replaying torch's draws (tests/parity/test_replay.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, d_in=12, d_z=4):
        super().__init__()
        self.enc = nn.Linear(d_in, 16)
        self.mu = nn.Linear(16, d_z)
        self.logvar = nn.Linear(16, d_z)
        self.dec = nn.Linear(d_z, d_in)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = self.reparameterize(mu, logvar)
        return torch.sigmoid(self.dec(z)), mu, logvar


class NoiseInjection(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.weight = nn.Parameter(torch.full((1, channels, 1, 1), 0.5))

    def forward(self, x):
        h = self.conv(x)
        b, _, hh, ww = h.shape
        noise = torch.randn(b, 1, hh, ww)
        return h + self.weight * noise


class MCDropout(nn.Module):
    def __init__(self, d_in=10, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, 3)

    def forward(self, x):
        h = F.dropout(F.relu(self.fc1(x)), p=0.25, training=True)
        return self.fc2(h)


class Sampler(nn.Module):
    def __init__(self, d_in=8, vocab=6, dim=5):
        super().__init__()
        self.logits = nn.Linear(d_in, vocab)
        self.embed = nn.Embedding(vocab, dim)

    def forward(self, x):
        probs = F.softmax(self.logits(x), dim=-1)
        idx = torch.multinomial(probs, 3, replacement=True)
        return self.embed(idx).sum(1) + probs.sum(-1, keepdim=True)


class GumbelPolicy(nn.Module):
    def __init__(self, d_in=6, k=4):
        super().__init__()
        self.head = nn.Linear(d_in, k)
        self.value = nn.Linear(k, 2)

    def forward(self, x):
        y = F.gumbel_softmax(self.head(x), tau=0.5, hard=False)
        sample = torch.distributions.Normal(y, torch.ones_like(y) * 0.1).rsample()
        return self.value(sample)
