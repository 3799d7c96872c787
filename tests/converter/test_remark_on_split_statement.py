"""A statement a rule writes as several (a ``FlattenSentinel``: ViewWriteTransform's ``h[:, i] += r`` followed by
its write-back ``outs[0] = h``) that also carries a warning (ArgumentWriteTransform's MP107 "writes into its input
... built where its calls cannot be followed") gets the warning on its first line. Before, the engine asked the
sentinel for ``leading_lines``: AttributeError, MP299, the whole file copied unconverted (jwzhanggy/Graph-Bert's
code/MethodBertComp.py, whose BertEncoder adds a residual column by column). The port runs like torch."""
from __future__ import annotations

import ast

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = '''
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layer = nn.ModuleList(layers)

    def forward(self, hidden_states, residual_h=None):
        for i, layer_module in enumerate(self.layer):
            layer_outputs = layer_module(hidden_states)
            hidden_states = layer_outputs[0]
            if residual_h is not None:
                for index in range(hidden_states.size()[1]):
                    hidden_states[:, index] += residual_h
        return hidden_states


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoders = nn.ModuleList([Encoder([nn.Linear(4, 4)])])

    def forward(self, x, r):
        for enc in self.encoders:
            x = enc(x, r)
        return x
'''


def test_warning_on_a_split_statement_keeps_the_file_converted(tmp_path):
    result = convert_source(SOURCE, "enc.py")
    assert [d.code for d in result.diagnostics] == ["MP107"]  # the warning, no MP299
    ast.parse(result.code)
    line = next(l for l in result.code.splitlines() if "+= residual_h" in l)
    assert "# mindport: MP107 Encoder writes into its input hidden_states" in line
    assert "class Encoder(nn.Cell)" in result.code
    rng = np.random.default_rng(0)
    inputs = (rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32))
    assert_port_matches_in_mode(SOURCE, result.code, "Net", inputs, tmp_path, "split_remark", "pynative")
