"""Names bound by nested unpacking take the kind of what they unpack: ``_, (hn, cn) = self.lstm(x)`` (an RNN's
output and its state pair) makes ``cn`` a tensor, so ``cn.repeat(...)`` is torch's ``Tensor.repeat`` (MindSpore's
``.tile``), not MindSpore's own ``Tensor.repeat`` left silently (no CPU kernel: "'repeat' is not supported on this
device"). SegRNN's decoder reads ``cn`` only from such an unpacking."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Seg(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(4, 6, num_layers=1, batch_first=True)
            self.dec = nn.LSTM(4, 6, num_layers=1, batch_first=True)

        def forward(self, x):
            _, (hn, cn) = self.rnn(x)
            y, (a, (b, c)) = x, (hn, (cn, x))
            state = (hn.repeat(1, 2, 1), cn.repeat(1, 2, 1))
            out, _ = self.dec(torch.cat([x, x], 0), state)
            return out + b.repeat(1, 1, 1).sum() + c.repeat(1, 1, 1).mean()
""")


def test_nested_names_are_tensors():
    code = convert_source(SOURCE).code
    assert "cn.tile((1, 2, 1))" in code and "hn.tile((1, 2, 1))" in code
    assert "b.tile((1, 1, 1))" in code and "c.tile((1, 1, 1))" in code
    assert ".repeat(" not in code


def test_the_port_matches(tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Seg", [x], tmp_path, "nested_unpack",
                                "pynative", atol=1e-5)
