"""``[m.flatten_parameters() for m in self._to_flatten]`` as a statement (WaveRNN's CBHG): the statement form
``rnn.flatten_parameters()`` was dropped, the comprehension was kept and the Cell failed to build ("The 'GRU' object
has no attribute 'flatten_parameters'"). A comprehension statement of a dropped call goes too; the port matches."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Cbhg(nn.Module):
        def __init__(self):
            super().__init__()
            self._to_flatten = []
            self.rnn = nn.GRU(4, 3, batch_first=True, bidirectional=True)
            self._to_flatten.append(self.rnn)
            self._flatten_parameters()

        def _flatten_parameters(self):
            [m.flatten_parameters() for m in self._to_flatten]

        def forward(self, x):
            out, _ = self.rnn(x)
            return out
""")


def test_a_comprehension_of_dropped_calls_is_dropped(tmp_path):
    code = convert_source(SOURCE).code
    assert "m.flatten_parameters()" not in code, code
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Cbhg", [x], tmp_path, "flatten", "pynative", atol=1e-5)
