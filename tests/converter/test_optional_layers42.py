"""An attribute a class assigns ``None`` besides its layer builds (``self.gate = None`` then ``if gate: self.gate =
nn.Linear(d, d)``, ``self.head = nn.Linear(d, d) if gate else None``) is read by the dtype facts as those layers
(native_facts.class_float_layers, _branch_calls): every read the facts take of it is a call of it, an attribute of it
(``.weight``), an iteration of it or a torch operation's operand, and torch raises on ``None`` at each, so where the
program runs it holds one of the layers. x-transformers' ``head_gate = self.to_v_head_gate(x)`` (``None`` unless
``gate_value_heads``) and CoPE's ``attn_logits = self.talking_heads(attn_logits)`` (a Conv2d or ``None``) then
``.sigmoid()`` lose the int-to-float guard. An integer input keeps it. The converted modules run against torch in
PyNative and GRAPH_MODE, with and without the optional layers."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Gated(nn.Module):
        def __init__(self, d=4, gate=True):
            super().__init__()
            self.proj = nn.Linear(d, d)
            self.gate = None
            if gate:
                self.gate = nn.Linear(d, d)
            self.head = nn.Linear(d, d) if gate else None

        def forward(self, x):
            out = self.proj(x)
            if self.gate is not None:
                out = out * self.gate(x).sigmoid()
            if self.head is not None:
                out = self.head(out)
            b = out.sigmoid()
            c = torch.arange(4).sigmoid()
            return out, b, c


    class Plain(Gated):
        def __init__(self):
            super().__init__(gate=False)
""")


def test_optional_layers_give_floats():
    code = convert_source(SOURCE).code
    assert "out = out * ops.sigmoid(self.gate(x))" in code, code
    assert "b = ops.sigmoid(out)" in code, code
    assert "c = mp_math.sigmoid(ops.arange(" in code, code  # an int64 input: torch gives float32


@pytest.mark.parametrize("cls", ["Gated", "Plain"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_optional_layers_match_torch(mode, cls, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"optional_{cls}", mode)
