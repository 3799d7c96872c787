"""A tiny MLP-Mixer: token mixing via transpose, channel mixing, ModuleList of blocks."""
from torch import nn


class MlpBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class MixerLayer(nn.Module):
    def __init__(self, tokens, channels):
        super().__init__()
        self.norm1 = nn.LayerNorm(channels)
        self.token_mix = MlpBlock(tokens, tokens * 2)
        self.norm2 = nn.LayerNorm(channels)
        self.channel_mix = MlpBlock(channels, channels * 2)

    def forward(self, x):
        y = self.norm1(x).transpose(1, 2)
        x = x + self.token_mix(y).transpose(1, 2)
        return x + self.channel_mix(self.norm2(x))


class MlpMixer(nn.Module):
    def __init__(self, image=8, patch=4, channels=12, depth=2, classes=5):
        super().__init__()
        tokens = (image // patch) ** 2
        self.stem = nn.Conv2d(3, channels, kernel_size=patch, stride=patch)
        self.layers = nn.ModuleList()
        for _ in range(depth):
            self.layers.append(MixerLayer(tokens, channels))
        self.norm = nn.LayerNorm(channels)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.stem(x)
        x = x.flatten(2).transpose(1, 2)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x).mean(dim=1))
