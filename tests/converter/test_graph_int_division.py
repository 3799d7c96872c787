"""torch's ``/`` of integer tensors gives float32 in GRAPH_MODE as in torch. A graph folds an integer tensor known at
compile time (``arange`` of a number) and folds its ``/`` with numpy's true_divide: float64 (encodec's
``create_sin_embedding``: "For primitive[MatMulExt], the input type must be same: w float32, x float64", trials
entry encodec/transformer). mindport.runtime.graph_div re-registers the graph's ``/``.
The slice: encodec's sinusoidal embedding into a Linear (converted, both modes, vs torch), and the forms of ``/``
with an integer operand (constant / number, constant / constant, number / constant, float32 / constant, run-time
int / number), dtypes and values compared with torch's own in a graph."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SIN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def create_sin_embedding(positions, dim, max_period=10000):
        half_dim = dim // 2
        adim = torch.arange(half_dim).view(1, 1, -1)
        phase = positions / (max_period ** (adim / (half_dim - 1)))
        return torch.cat([torch.cos(phase), torch.sin(phase)], dim=-1)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            positions = torch.arange(x.shape[1]).view(1, -1, 1)
            return self.proj(x + create_sin_embedding(positions, 8, max_period=100))
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sin_embedding_matches_torch(tmp_path, mode):
    # encodec's converted module imports mindport runtime modules (which load graph_div); this small one imports
    # none, so the test loads it as they do (a file importing no runtime module keeps MindSpore's "/": open)
    import mindport.runtime._graph  # noqa: F401
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    assert_port_matches_in_mode(SIN, convert_source(SIN).code, "Net", [x], tmp_path, "sin", mode, atol=1e-5)


def test_division_forms_in_graph():
    import mindspore as ms
    import torch
    from mindspore import nn, ops

    import mindport.runtime._graph  # noqa: F401 - loads graph_div, as every converted file's runtime import does

    class Divisions(nn.Cell):
        def construct(self, n):
            a = ops.arange(6)
            f = ops.ones(6, ms.float32) * 3
            return a / 4, a / (a + 1), 12 / (a + 1), f / (a + 1), n / 4, (a > 2) / 2

    def want(n):
        a = torch.arange(6)
        f = torch.ones(6) * 3
        return a / 4, a / (a + 1), 12 / (a + 1), f / (a + 1), n / 4, (a > 2) / 2

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = Divisions()(ms.Tensor(np.arange(6)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for g, w in zip(got, want(torch.arange(6)), strict=True):
        assert str(w.dtype) == "torch.float32" and g.dtype == ms.float32, (g.dtype, w.dtype)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6)
