"""A constructor sequence unpacked into names that the class reads as sequences themselves (MolGAN's
Discriminator: ``graph_conv_dim, aux_dim, linear_dim = conv_dim``, then ``graph_conv_dim[-1]`` and
``linear_dim[:-1]``; batch 19, guessed [8, 16, 16], "'int' object is not subscriptable"). The class: a sequence's
items are lists where the class indexes, slices, iterates or measures the name they are unpacked into, sizes
elsewhere (``Param.items``). Fixture of our own; the expected status comes from torch and MindSpore run by the
proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

CRITIC = '''
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self, dims, in_dim):
        super().__init__()
        conv_dims, mid, head_dims = dims
        self.convs = nn.Sequential(*[nn.Linear(a, b) for a, b in zip([in_dim] + conv_dims[:-1], conv_dims)])
        self.mid = nn.Linear(conv_dims[-1], mid)
        layers = []
        for a, b in zip([mid] + head_dims[:-1], head_dims):
            layers.append(nn.Linear(a, b))
        self.head = nn.Sequential(*layers)

    def forward(self, x):
        return self.head(torch.tanh(self.mid(torch.tanh(self.convs(x)))))
'''


def test_items_unpacked_into_names_read_as_sequences_are_lists(tmp_path):
    found = prove_files(tmp_path, {"critic.py": CRITIC}, "critic.py:*")
    entry = found["critic.py:Critic"]
    assert entry["status"] == "proven", entry
    assert "dims=[[8, 16], 16, [8, 16]]" in entry["ctor"], entry["ctor"]
