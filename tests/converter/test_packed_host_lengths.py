"""``pack_padded_sequence`` given its lengths as a host copy of a tensor (NCRF++'s BiLSTM-CRF tagger:
``pack_padded_sequence(word_represent, word_seq_lengths.cpu().numpy(), True)``, then ``self.lstm(packed, None)``)
compiles in GRAPH_MODE. The copy (``.asnumpy()``, ``.tolist()``) is Python in a graph (MindSpore's JIT Fallback):
the pack call then ran as Python, its PackedSequence reached MindSpore's recurrent construct as a Python object and
the compile failed ("'Tuple' object has no attribute 'ndim'", mindport/runtime/unbatched.py). torch takes the tensor
with the same meaning, so the converter passes the tensor (value transform ``functions_lengths_tensor``).

The surface, enumerated in the conversion test (cheap): every chain of ``.cpu()``/``.detach()``/``.data``/``.clone()``
ending in ``.numpy()``/``.tolist()``; values written otherwise (a list display, ``list(t.data)``, a numpy array the
program built) are kept. The GRAPH slice (a compile is ~5 s): LSTM batch-first with ``.cpu().numpy()`` and a
positional ``None`` state (NCRF++'s word layer), GRU time-major with ``.tolist()`` and enforce_sorted=False; the first
also in PyNative. Expected values are torch's own outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

TAGGER = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 3, num_layers=1, batch_first=True, bidirectional=True)
            self.tag = nn.Linear(6, 5)

        def forward(self, x, lengths):
            packed_words = pack_padded_sequence(x, LENGTHS, True)
            hidden = None
            lstm_out, hidden = self.lstm(packed_words, hidden)
            lstm_out, _ = pad_packed_sequence(lstm_out)
            return self.tag(lstm_out.transpose(1, 0)), hidden[0].transpose(1, 0).contiguous().view(x.size(0), -1)
""")

TIME_MAJOR = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(4, 3)

        def forward(self, x, lengths):
            packed = nn.utils.rnn.pack_padded_sequence(x.transpose(0, 1), lengths.tolist(), enforce_sorted=False)
            out, h = self.gru(packed)
            return nn.utils.rnn.pad_packed_sequence(out, total_length=x.size(1))[0], h
""")

COPIES = ["lengths.numpy()", "lengths.cpu().numpy()", "lengths.detach().cpu().numpy()", "lengths.data.cpu().numpy()",
          "lengths.tolist()", "lengths.cpu().tolist()", "lengths.clone().numpy()", "self.lengths.cpu().numpy()"]
KEPT = ["lengths", "[5, 3]", "list(lengths.data)", "np.array([5, 3])", "lengths.cpu()", "lengths_np"]


@pytest.mark.parametrize("written", COPIES + KEPT)
def test_the_lengths_are_the_tensor(written):
    code = convert_source(TAGGER.replace("LENGTHS", written)).code
    line = next(ln for ln in code.splitlines() if "pack_padded_sequence(" in ln)
    if written in KEPT:
        assert "numpy" not in line or written.startswith("np.") or written == "lengths_np"
        assert ("lengths.cpu()" not in line) if written == "lengths.cpu()" else True
    else:
        want = written.split(".")[0] if not written.startswith("self.") else "self.lengths"
        assert f"pack_padded_sequence(x, {want}, batch_first=True)" in line, line


def _inputs():
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    return [x, np.array([5, 3], np.int64)]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_tagger_packing_numpy_lengths_matches_torch(tmp_path, mode):
    source = TAGGER.replace("LENGTHS", "lengths.cpu().numpy()")
    assert_port_matches_in_mode(source, convert_source(source).code, "Net", _inputs(), tmp_path, "tagger", mode,
                                atol=1e-5)


def test_a_time_major_gru_packing_listed_lengths_matches_torch_in_a_graph(tmp_path):
    x, _ = _inputs()
    assert_port_matches_in_mode(TIME_MAJOR, convert_source(TIME_MAJOR).code, "Net", [x, np.array([3, 5], np.int64)],
                                tmp_path, "timemajor", "graph", atol=1e-5)
