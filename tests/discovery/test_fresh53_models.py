"""Causes of discovery batch 23's first contact (disc53, session 51), each a fixture of our own: the expected statuses
come from torch and MindSpore run by the proof."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

# NeWnIx5991/FM-and-DeepFM-of-recommendation-for-pytorch: a factorization machine over one float row of counts per
# sample, the same row read by a Linear and, cast with ``.long()``, by one embedding per field. The row was drawn
# from a normal law, its negative values were refused by the table ("index out of range in self"), and the id-range
# retry took integer inputs only: not built. The class: a float input an embedding refuses is drawn again from
# [0, 1), non-negative values whose integer part (every cast to ids) is a valid row.
FLOAT_IDS = '''
import torch
from torch import nn


class CountsMachine(nn.Module):
    def __init__(self, width, fields, k):
        super().__init__()
        self.fields = fields
        self.linear = nn.Linear(width, 1)
        self.tables = nn.ModuleList([nn.Embedding(n, k) for n in fields])

    def forward(self, X):
        first = self.linear(X)
        start, parts = 0, []
        for i, n in enumerate(self.fields):
            parts.append(self.tables[i](X[:, start:start + n].long()))
            start += n
        pairs = torch.cat(parts, 1).sum(-1)
        return first + (pairs * X).sum(1, keepdim=True)


class Build(nn.Module):
    def __init__(self):
        super().__init__()
        self.fm = CountsMachine(12, [4, 8], 3)
'''

# adambielski/CapsNet-pytorch's ReconstructionNet(x, target): the target's class ids scattered into a mask of
# n_classes columns (``mask.scatter_(1, target.view(-1, 1), 1.)``). The ids were drawn up to the width of the other
# argument (160) and torch refused them: "index 11 is out of bounds for dimension 1 with size 10"; no retry read the
# size it names. The class: integer arguments refused by an index bound are drawn again below the size the error
# names.
SCATTER_TARGET = '''
import torch
from torch import nn


class MaskedDecoder(nn.Module):
    def __init__(self, n_dim=4, n_classes=10):
        super().__init__()
        self.n_dim, self.n_classes = n_dim, n_classes
        self.fc = nn.Linear(n_dim * n_classes, 12)

    def forward(self, x, target):
        mask = torch.zeros((x.size(0), self.n_classes))
        mask.scatter_(1, target.view(-1, 1), 1.)
        x = x.view(-1, self.n_classes, self.n_dim) * mask.unsqueeze(2)
        return self.fc(x.view(-1, self.n_dim * self.n_classes))
'''

# adambielski/CapsNet-pytorch's CapsNet: a capsule network for MNIST whose constructor fixes its primary capsules at
# 32 * 6 * 6 (what a 28 x 28 digit leaves after a 9 x 9 convolution and a 9 x 9 one of stride 2); the images were
# tried at 32, 64, 84 (...) and each refused ("The size of tensor a (2048) must match the size of tensor b (1152)"):
# not built. The class: a model of one input channel is tried at 28 x 28, the size of the grayscale digit sets
# (MNIST, Fashion-MNIST, EMNIST), after 32 x 32.
DIGITS = '''
import torch
from torch import nn


class DigitCaps(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=9)
        self.primary = nn.Conv2d(8, 4, kernel_size=9, stride=2)
        self.routes = nn.Parameter(torch.randn(4 * 6 * 6, classes) * 0.1)

    def forward(self, x):
        u = self.primary(torch.relu(self.conv1(x)))
        u = u.view(u.size(0), -1)
        return u * self.routes.sum(1)
'''

# Renovamen/Image-Captioning's decoders: forward(encoder_out, encoded_captions, caption_lengths), the lengths one per
# row in a column (B x 1: ``caption_lengths.squeeze(1)``). They were drawn a vector (``2:int64:16:16``) and torch
# refused the squeeze: "Dimension out of range (expected to be in range of [-1, 0], but got 1)", the rank hints
# reading the first argument only: three decoders not built. The class: constant integer lengths beside a sequence,
# refused for an axis 1 they lack, are retried as a column.
COLUMN_LENGTHS = '''
import torch
from torch import nn


class WordDecoder(nn.Module):
    def __init__(self, feat_dim=16, embed_dim=8, hidden=12, vocab=20):
        super().__init__()
        self.init_h = nn.Linear(feat_dim, hidden)
        self.embedding = nn.Embedding(vocab, embed_dim)
        self.cell = nn.LSTMCell(embed_dim, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, features, captions, lengths):
        lengths = lengths.squeeze(1)
        steps = torch.arange(captions.size(1))
        mask = (steps[None, :] < lengths[:, None]).float()
        h = torch.tanh(self.init_h(features))
        c = torch.zeros_like(h)
        words = self.embedding(captions)
        scores = []
        for t in range(captions.size(1)):
            h, c = self.cell(words[:, t], (h, c))
            scores.append(self.out(h) * mask[:, t:t + 1])
        return torch.stack(scores, 1)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh53"),
                       {"fm.py": FLOAT_IDS, "caps.py": SCATTER_TARGET, "digits.py": DIGITS,
                        "words.py": COLUMN_LENGTHS}, "*")


def test_a_float_row_an_embedding_refuses_is_drawn_non_negative(proven):
    model = proven["fm.py:CountsMachine"]
    assert model["status"] == "proven", model
    assert model["inputs"][0].endswith(":float32:0:1"), model["inputs"]


def test_ids_refused_by_an_index_bound_are_drawn_below_it(proven):
    model = proven["caps.py:MaskedDecoder"]
    assert model["status"] == "proven", model
    assert model["inputs"][1].endswith(":int64:0:10"), model["inputs"]


def test_a_one_channel_image_model_is_tried_at_the_digit_size(proven):
    model = proven["digits.py:DigitCaps"]
    assert model["status"] == "proven", model
    assert model["inputs"] == ["2x1x28x28:float32"], model["inputs"]


def test_lengths_read_as_a_column_are_retried_so(proven):
    model = proven["words.py:WordDecoder"]
    assert model["status"] == "proven", model
    assert "x1:int" in model["inputs"][2], model["inputs"]


def test_the_id_hints_read_the_index_bound_and_a_float_row():
    from mindport.discovery.build import _fewer_ids, _id_range_hint

    bound = "RuntimeError: index 11 is out of bounds for dimension 1 with size 10"
    assert _fewer_ids(bound, "2:int64:0:160") == "2:int64:0:10"
    assert _fewer_ids(bound, "2:int64:0:8") == "2:int64:0:8"  # already below the bound
    assert _fewer_ids(bound, "2x160:float32") == "2x160:float32"
    table = "IndexError: index out of range in self"
    assert _id_range_hint(table, [2, 12], "float32") == ["2x12:float32:0:1"]
    assert _id_range_hint("RuntimeError: other", [2, 12], "float32") == []
    assert _id_range_hint(table, [2, 12], "float32:0:1") == []
