"""Sizes from a tensor's values in a model's forward (Image-Captioning's decoders: ``decode_lengths = (caption_lengths
- 1).tolist()``, then ``max(decode_lengths)`` as a size and a loop's length, ``sum([l > t for l in decode_lengths])``
as a batch size): MindSpore 2.10's GRAPH_MODE compiles before it has values and fails ("Getitem can not get element
from an empty dynamic length sequence"); no graph form computes a shape from values. The conversion says so (MP107,
ValueListSizeTransform), PyNative matches torch, and the graph does fail as said: the failure is never silent."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Decoder(nn.Module):
        def __init__(self, dim=4, vocab=5):
            super().__init__()
            self.step = nn.Linear(dim, dim)
            self.fc = nn.Linear(dim, vocab)
            self.vocab = vocab

        def forward(self, x, lengths):
            lengths, order = lengths.sort(dim=0, descending=True)
            x = x[order]
            decode_lengths = (lengths - 1).tolist()
            out = torch.zeros(x.shape[0], max(decode_lengths), self.vocab)
            h = torch.zeros(x.shape[0], x.shape[2])
            for t in range(max(decode_lengths)):
                n = sum([l > t for l in decode_lengths])
                h = torch.tanh(self.step(x[:n, t]) + h[:n])
                out[:n, t, :] = self.fc(h)
            return out
""")

DATA_ONLY = textwrap.dedent("""
    import torch.nn as nn


    class Lengths(nn.Module):
        def forward(self, x):
            n = x.shape[0]
            values = x.tolist()
            return x * n, values
""")


def _inputs():
    x = np.random.default_rng(0).standard_normal((3, 6, 4)).astype(np.float32)
    return [x, np.array([4, 6, 3], dtype=np.int64)]


def test_sizes_from_values_are_said():
    code = convert_source(SOURCE).code
    line = next(l for l in code.splitlines() if "decode_lengths = " in l)
    assert "MP107 a tensor's values made a Python list (.tolist()) give sizes" in line
    assert "MP107" not in convert_source(DATA_ONLY).code  # a list that gives no size: nothing to say


def test_pynative_matches_torch(tmp_path):
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Decoder", _inputs(), tmp_path, "vlist54",
                                "pynative")


def test_graph_fails_as_said(tmp_path):
    with pytest.raises(Exception, match="dynamic length sequence"):
        assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Decoder", _inputs(), tmp_path, "vlist54",
                                    "graph")
