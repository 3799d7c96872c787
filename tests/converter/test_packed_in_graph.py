"""A recurrent layer called on ``pack_padded_sequence(...)`` and read back with ``pad_packed_sequence`` compiles in
GRAPH_MODE (batch 7: ABSA x4, NARM, VQA; batch 8: Tacotron's packed encoder were refused there with a mindport
error). In a graph the packed batch travels as the plain tuple (padded time-major batch, lengths): MindSpore's
recurrent Cells take it as their input and run with ``seq_length`` (final state at each sequence's last valid step,
in the caller's order as torch gives it), and ``pad_packed_sequence`` zeroes (``padding_value``) the steps past each
length and cuts the time axis to ``max(lengths)`` (``total_length`` pads further). Expected values are torch's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

# batch-first and time-major, enforce_sorted=False (unsorted lengths), a bidirectional LSTM and a 2-layer
# bidirectional GRU/LSTM stacked on the first's output padded to the input's length (total_length)
STACKED = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


    class Reader(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = nn.LSTM(4, 5, batch_first=True, bidirectional=True)
            self.second = nn.GRU(10, 3, num_layers=2, bidirectional=True)

        def forward(self, x, lengths):
            packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            out, (h, c) = self.first(packed)
            y, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
            cut, n = pad_packed_sequence(out, batch_first=True)
            out2, h2 = self.second(pack_padded_sequence(y.transpose(0, 1), lengths, enforce_sorted=False))
            z, _ = pad_packed_sequence(out2, padding_value=-1.0)
            return cut, n, h.sum(0) + c.sum(0), z, h2
""")

# ABSA's DynamicLSTM shape: sort by length by hand, pack the sorted batch (enforce_sorted), a given initial state,
# unsort the output and the final state; a plain RNN; lengths counted from the token ids, packed as a list of the
# tensor's items (VQA: list(q_len.data))
SORTED_BY_HAND = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(4, 6, batch_first=True)
            self.h0 = nn.Parameter(torch.linspace(-0.5, 0.5, 6).view(1, 1, 6))

        def forward(self, x, tokens):
            x_len = torch.sum(tokens != 0, dim=-1)
            sort_idx = torch.sort(-x_len)[1].long()
            unsort_idx = torch.sort(sort_idx)[1].long()
            x_len = x_len[sort_idx]
            x = x[sort_idx]
            packed = torch.nn.utils.rnn.pack_padded_sequence(x, list(x_len.data), batch_first=True)
            out, ht = self.rnn(packed, self.h0.expand(1, x.size(0), 6).contiguous())
            ht = torch.transpose(ht, 0, 1)[unsort_idx]
            out = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0]
            return out[unsort_idx], ht
""")


def test_the_packing_stays_the_runtime_s():
    code = convert_source(STACKED).code
    assert "mp_rnn.pack_padded_sequence(" in code and "mp_rnn.pad_packed_sequence(" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_stacked_packed_layers_match(tmp_path, mode):
    code = convert_source(STACKED).code
    x = np.random.default_rng(0).standard_normal((3, 6, 4)).astype(np.float32)
    lengths = np.array([4, 5, 2], np.int64)  # max 5 < 6 steps: the padded output is cut to 5
    assert_port_matches_in_mode(STACKED, code, "Reader", [x, lengths], tmp_path, "packed_stack", mode, atol=1e-5)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sorted_by_hand_matches(tmp_path, mode):
    code = convert_source(SORTED_BY_HAND).code
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5, 4)).astype(np.float32)
    tokens = np.array([[3, 1, 0, 0, 0], [2, 2, 2, 2, 0], [5, 0, 0, 0, 0], [1, 2, 3, 0, 0]], np.int64)
    assert_port_matches_in_mode(SORTED_BY_HAND, code, "Encoder", [x, tokens], tmp_path, "packed_sorted", mode,
                                atol=1e-5)


# ABSA's SqueezeEmbedding: pack then pad at once (the batch cut to its longest sequence), then a recurrent layer on
# the cut batch: its time axis is max(lengths), a value, which MindSpore's unrolled recurrent loop can't take
SQUEEZED = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


    class Squeezed(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(4, 3, batch_first=True)

        def forward(self, x, lengths):
            cut = pad_packed_sequence(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False),
                                      batch_first=True)[0]
            out, h = self.rnn(pack_padded_sequence(cut, lengths, batch_first=True, enforce_sorted=False))
            return pad_packed_sequence(out, batch_first=True)[0], h
""")


def test_a_recurrent_layer_on_a_cut_batch_says_why_in_a_graph(tmp_path):
    code = convert_source(SQUEEZED).code
    x = np.random.default_rng(2).standard_normal((2, 5, 4)).astype(np.float32)
    lengths = np.array([3, 4], np.int64)
    assert_port_matches_in_mode(SQUEEZED, code, "Squeezed", [x, lengths], tmp_path, "packed_cut", "pynative",
                                atol=1e-5)
    with pytest.raises(RuntimeError, match="mindport: a recurrent layer in a graph needs a static time axis"):
        assert_port_matches_in_mode(SQUEEZED, code, "Squeezed", [x, lengths], tmp_path, "packed_cut", "graph")


PLAIN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 3, num_layers=2, batch_first=True, bidirectional=True)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return out, h, c
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_plain_call_is_unchanged_once_the_module_loads(tmp_path, mode):
    import mindport.runtime.rnn  # noqa: F401 - replaces MindSpore's recurrent construct (for every port after it)

    code = convert_source(PLAIN).code
    x = np.random.default_rng(3).standard_normal((2, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(PLAIN, code, "Plain", [x], tmp_path, "packed_plain", mode, atol=1e-5)
