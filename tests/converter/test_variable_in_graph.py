"""``Variable(t, requires_grad=False)`` in forward (batch 7 slt's positional encoder: ``Variable(self.pe[:, :n])``):
torch's Variable takes a tensor only and gives it back detached, so the port writes ``ops.stop_gradient(t)``.
``mindspore.Tensor(t)`` inside construct left the rest of the graph untyped (MindSpore's any-type kernel graph), and
the ``std`` of a LayerNorm written by hand after it failed in GRAPH_MODE: "Select CPU operator[ReduceStd] fail!"."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable


    class Encoder(nn.Module):
        def __init__(self, d_model=4, max_len=10):
            super().__init__()
            self.proj = nn.Linear(d_model, d_model)
            self.register_buffer("pe", torch.arange(max_len * d_model, dtype=torch.float32).view(1, max_len, d_model) / 40)

        def forward(self, x):
            pe = Variable(self.pe[:, :x.size(1)], requires_grad=False)
            x = self.proj(x) + pe
            return (x - x.mean(dim=-1, keepdim=True)) / (x.std(dim=-1, keepdim=True) + 1e-6)
""")


def test_variable_is_a_detached_tensor():
    code = convert_source(SOURCE).code
    assert "ops.stop_gradient(self.pe[:, :x.shape[1]])" in code and "ms.Tensor(" not in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_variable_then_std_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Encoder", [x], tmp_path, "variable", mode, atol=1e-5)
