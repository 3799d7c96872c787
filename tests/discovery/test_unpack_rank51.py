"""A forward that unpacks its input's shape with more names (``b, c, h, w, block, heads = *x.shape, self.block,
self.heads``: lucidrains/halonet-pytorch's HaloAttention, a trials entry whose class `migrate` did not build in the
session-51 hand-entry comparison: "no input ran: 2x512 ... not enough values to unpack (expected 8, got 6)"). The rank
hint took the expected count (8) as the input's rank; the class: the input is as many axes short as the unpack
(given + expected - got). Fixture of our own; the expected statuses come from torch and MindSpore run by the proof."""
from __future__ import annotations

from mindport.discovery.build import _rank_hint
from tests.discovery._prove import prove_files

HALO = '''
import torch
from torch import nn


class BlockAttention(nn.Module):
    def __init__(self, dim=16, block=4, heads=2):
        super().__init__()
        self.block, self.heads = block, heads
        self.to_qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, c, h, w, block, heads = *x.shape, self.block, self.heads
        assert h % block == 0 and w % block == 0, "the map must divide into blocks"
        t = x.permute(0, 2, 3, 1).reshape(b, h * w, c)
        q, k, v = self.to_qkv(t).chunk(3, dim=-1)
        att = (q @ k.transpose(-1, -2) / (c // heads) ** 0.5).softmax(dim=-1)
        return self.out(att @ v).reshape(b, h, w, c).permute(0, 3, 1, 2)
'''


def test_the_rank_an_unpack_of_the_shape_asks_for():
    assert _rank_hint("ValueError: not enough values to unpack (expected 8, got 6)", 2) == 4
    assert _rank_hint("ValueError: not enough values to unpack (expected 4, got 2)", 2) == 4
    assert _rank_hint("ValueError: not enough values to unpack (expected 4, got 2)") == 4


def test_an_input_unpacked_beside_attributes_is_built(tmp_path):
    found = prove_files(tmp_path, {"halo.py": HALO}, "halo.py:*")
    entry = found["halo.py:BlockAttention"]
    assert entry["status"] == "proven", entry
    assert len(entry["inputs"][0].split(":")[0].split("x")) == 4, entry["inputs"]
