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


TUPLE_SOURCE = SOURCE.replace("nn.ModuleList([Encoder([nn.Linear(4, 4)])])", "nn.ModuleList([Encoder([Pair()])])") + '''

class Pair(nn.Module):
    """Returns a tuple, as transformers' BertLayer does: ``(layer_output,) + attention_outputs[1:]``."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, h):
        out = self.fc(h)
        return (out, out.sum())
'''


def test_written_item_of_a_returned_tuple_is_not_assigned_back(tmp_path):
    """``layer_outputs = layer(h); h = layer_outputs[0]; h[:, i] += r``: ViewWriteTransform's write-back
    ``layer_outputs[0] = h`` raised "'tuple' object does not support item assignment" when the layer returns a
    tuple (Graph-Bert's BertEncoder over BertLayer); the item is the tensor written itself, which MindSpore's item
    assignment changes in place in PyNative, so the write-back is made only for a base that is no tuple. The
    tensor-returning layer above still gets it (and matches torch)."""
    result = convert_source(TUPLE_SOURCE, "enc_tuple.py")
    assert "if not isinstance(layer_outputs, tuple):" in result.code
    rng = np.random.default_rng(1)  # layer_outputs[0] is (2, 3, 4) here: a column h[:, i] is (2, 4)
    inputs = (rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32))
    assert_port_matches_in_mode(TUPLE_SOURCE, result.code, "Net", inputs, tmp_path, "tuple_back", "pynative")
