"""Causes of discovery batch 22's first contact (disc52, session 50), each a fixture of our own: the expected statuses
come from torch and MindSpore run by the proof."""
from __future__ import annotations

import pytest

from tests.discovery._prove import prove_files

# AuCson/PyTorch-Batch-Attention-Seq2seq: an encoder over a time-major T x B batch of ids (its GRU not batch_first)
# packs them with ``pack_padded_sequence(embedded, input_lengths)``; the lengths were drawn one per row of the first
# axis (B=2 of a 2 x 16 guess), and torch refused them: "Expected `len(lengths)` to be equal to batch_size, but got 2
# (batch_size=16)", not built. The class: lengths beside a time-major sequence count its axis 1, each length the
# whole axis 0; the error names both sizes, and the lengths are retried so.
TIME_MAJOR = '''
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class StepEncoder(nn.Module):
    def __init__(self, vocab, width, hidden):
        super().__init__()
        self.table = nn.Embedding(vocab, width)
        self.rnn = nn.LSTM(width, hidden)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.table(tokens), lengths)
        states, _ = self.rnn(packed)
        states, _ = pad_packed_sequence(states)
        return states.sum(0)
'''

# SONG-Xingyu666/q_gcn's TemporalGraphConvolution (a spatial-temporal graph convolution): N x C x T x V frames of V
# joints, and an adjacency per partition, K x V x V, met in ``einsum('nkctv,kvw->nctw', x, A)``. The adjacency was
# guessed over the channels (3 x 16 x 16 beside 2 x 16 x 32 x 32 frames) and einsum refused it: "subscript v has size
# 16 for operand 1 which does not broadcast with previously seen size 32"; its repository call site's constructor
# failed so, and only a guessed constructor whose channels happened to equal the joints (32) ran. The class: an
# einsum that names the size an operand should have had; every other argument's axes of the one size at the other.
PARTITIONS = '''
import torch
from torch import nn


class JointMixing(nn.Module):
    def __init__(self, in_channels, out_channels, partitions):
        super().__init__()
        self.partitions = partitions
        self.lift = nn.Conv2d(in_channels, out_channels * partitions, 1)

    def forward(self, x, A):
        assert A.size(0) == self.partitions
        y = self.lift(x)
        n, kc, t, v = y.size()
        y = y.view(n, self.partitions, kc // self.partitions, t, v)
        return torch.einsum('nkctv,kvw->nctw', (y, A))


class Skeleton(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = JointMixing(4, 8, 3)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh52"), {"steps.py": TIME_MAJOR, "joints.py": PARTITIONS}, "*")


def test_lengths_beside_a_time_major_sequence_count_its_second_axis(proven):
    model = proven["steps.py:StepEncoder"]
    assert model["status"] == "proven", model
    tokens, lengths = model["inputs"][:2]
    steps, batch = tokens.split(":")[0].split("x")
    assert lengths == f"{batch}:int64:{steps}:{steps}", model["inputs"]


def test_an_adjacency_refused_by_einsum_takes_the_size_it_names(proven):
    model = proven["joints.py:JointMixing"]
    assert model["status"] == "proven", model
    assert model["ctor"] == "4, 8, 3", model  # its own call site's channels, not a guess that fits
    frames, adjacency = model["inputs"][:2]
    joints = frames.split(":")[0].split("x")[-1]
    assert adjacency.split(":")[0] == f"3x{joints}x{joints}", model["inputs"]


def test_axes_at_moves_the_named_size_only():
    from mindport.discovery.build import _axes_at

    assert _axes_at("3x16x16:float32", "16", "32") == "3x32x32:float32"
    assert _axes_at("16x4:float32", "16", "32") == "16x4:float32"  # the first axis (a batch or a count) stays
    assert _axes_at("16:int64:0:4", "16", "32") == "32:int64:0:4"
    assert _axes_at("value:None", "16", "32") == "value:None"


def test_time_major_lengths_only_for_the_packing_error():
    from mindport.discovery.build import _time_major_lengths

    problem = "RuntimeError: Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=16)"
    assert _time_major_lengths(problem, ["2x16:int64:0:32", "2:int64:16:16"]) == [["2x16:int64:0:32",
                                                                                  "16:int64:2:2"]]
    assert _time_major_lengths(problem, ["2x8:int64:0:32", "2:int64:8:8"]) == []  # axis 1 is not that batch
    assert _time_major_lengths("RuntimeError: other", ["2x16:int64:0:32", "2:int64:16:16"]) == []
    assert _time_major_lengths(problem, ["2x16:float32", "2x16:float32"]) == []  # no lengths argument
