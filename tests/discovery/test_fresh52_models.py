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


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh52"), {"steps.py": TIME_MAJOR}, "*")


def test_lengths_beside_a_time_major_sequence_count_its_second_axis(proven):
    model = proven["steps.py:StepEncoder"]
    assert model["status"] == "proven", model
    tokens, lengths = model["inputs"][:2]
    steps, batch = tokens.split(":")[0].split("x")
    assert lengths == f"{batch}:int64:{steps}:{steps}", model["inputs"]


def test_time_major_lengths_only_for_the_packing_error():
    from mindport.discovery.build import _time_major_lengths

    problem = "RuntimeError: Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=16)"
    assert _time_major_lengths(problem, ["2x16:int64:0:32", "2:int64:16:16"]) == [["2x16:int64:0:32",
                                                                                  "16:int64:2:2"]]
    assert _time_major_lengths(problem, ["2x8:int64:0:32", "2:int64:8:8"]) == []  # axis 1 is not that batch
    assert _time_major_lengths("RuntimeError: other", ["2x16:int64:0:32", "2:int64:16:16"]) == []
    assert _time_major_lengths(problem, ["2x16:float32", "2x16:float32"]) == []  # no lengths argument
