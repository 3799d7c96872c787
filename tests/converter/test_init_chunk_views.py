"""``for w in weight.chunk(4, 0): nn.init.orthogonal_(w)`` (an LSTM's gates, Cyanogenoid/pytorch-vqa's text
encoder, batch 7): torch's pieces are views, so each init writes into the parameter. MindSpore's chunk/split/unbind
give copies: the loop became ``w.set_data(...)`` on a Tensor (AttributeError). The pieces are now kept in a list,
filled in place by the runtime init, and joined back into the parameter after the loop."""
from __future__ import annotations

import textwrap

import numpy as np
import torch

from mindport import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Gates(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(8, 3))
            self.v = nn.Parameter(torch.randn(3, 6))
            self.u = nn.Parameter(torch.randn(4, 2))
            self.q = nn.Parameter(torch.randn(12, 3))
            for piece in self.w.chunk(4, 0):
                nn.init.eye_(piece)
            for piece in torch.split(self.v, 2, dim=1):
                nn.init.constant_(piece, 0.5)
            for row in self.u.unbind(0):
                nn.init.zeros_(row)
            self._init_blocks(self.q)

        def _init_blocks(self, weight):
            for block in weight.chunk(4, 0):
                nn.init.orthogonal_(block)

        def forward(self, x):
            return x @ self.w.t()
""")


def test_each_piece_is_initialised_into_the_parameter(tmp_path):
    result = convert_source(SOURCE)
    assert ".set_data(ms.ops.cat(_mp_views, axis=0))" in result.code, result.code
    torch.manual_seed(0)
    reference = load_module(SOURCE, tmp_path / "gates_torch.py", "gates_torch").Gates()
    port = load_module(result.code, tmp_path / "gates_ms.py", "gates_ms").Gates()
    for name in ("w", "v", "u"):  # deterministic inits: equal to torch's
        np.testing.assert_array_equal(getattr(port, name).asnumpy(), getattr(reference, name).detach().numpy())
    q = port.q.asnumpy()
    for block in np.split(q, 4, axis=0):  # each (3, 3) block orthogonal, as torch makes each view
        np.testing.assert_allclose(block @ block.T, np.eye(3), atol=1e-5)
