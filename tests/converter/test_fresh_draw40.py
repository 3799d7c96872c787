"""``x.uniform_(a, b)`` on a tensor nothing else holds, read in an expression (sooftware/attentions' ``nn.Parameter(
torch.rand(n).uniform_(-0.1, 0.1))``, CaiT's ``torch.zeros(num_layers).uniform_(0., 1.) < dropout``), is MindSpore's
``ops.rand_like(receiver) * (b - a) + a`` (TableCallTransform._fresh_draw, FRESH_DRAWS): the runtime uniform_ exists
for MindSpore's missing CPU kernel of the in-place draw and writes that same value into its receiver; with no one
else holding the receiver, the value is the result. A draw into a name (``held.uniform_(0, 1)``, a statement) and one
with ``generator=`` keep the runtime's. The converted module runs against torch in PyNative and GRAPH_MODE: shapes and
dtypes equal, every draw inside torch's bounds, the values computed from them (a comparison with a bound) equal."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Draws(nn.Module):
        def __init__(self, n=5):
            super().__init__()
            self.bias = nn.Parameter(torch.rand(n).uniform_(-0.1, 0.1))

        def forward(self, x):
            to_drop = torch.zeros(4).uniform_(0., 1.) < 2.0
            half = torch.ones(3, dtype=torch.float16).uniform_(2, to=3)
            unit = torch.zeros(2, 3, dtype=torch.float64).uniform_()
            upto = torch.zeros(2).uniform_(to=x.shape[0] + 1)
            held = torch.zeros(3)
            held.uniform_(0, 1)
            return self.bias * 1, to_drop, half, unit, upto, held
""")

# (low, high) of each drawn output (None: compared by value)
BOUNDS = [(-0.1, 0.1), None, (2, 3), (0, 1), (0, 3), (0, 1)]


def test_the_fresh_draws_are_rand_like_and_the_held_one_stays():
    code = convert_source(SOURCE).code
    assert code.count("ops.rand_like(") == 5, code
    assert "ops.rand_like(ops.rand(n)) * (0.1 - -0.1) + -0.1" in code, code
    assert "held = mp_inplace.uniform_(held, from_=0, to=1)" in code, code
    assert code.count("mp_inplace.uniform_(") == 1, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_fresh_draws_match_torch_in_shape_dtype_and_bounds(mode, tmp_path):
    import mindspore as ms
    import torch

    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    x = np.zeros((2, 4), np.float32)
    want = load_module(SOURCE, tmp_path / "t_draws.py", "t_draws").Draws()(torch.from_numpy(x))
    net = load_module(result.code, tmp_path / f"m_draws_{mode}.py", f"m_draws_{mode}").Draws()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = net(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert len(got) == len(want)
    for g, w, bounds in zip(got, want, BOUNDS):
        g_np, w_np = g.asnumpy(), w.detach().numpy()
        assert g_np.shape == w_np.shape
        assert str(g.dtype).lower().replace("bool_", "bool") == str(w.dtype).rpartition(".")[2]
        if bounds is None:
            np.testing.assert_array_equal(g_np, w_np)
        else:
            low, high = bounds
            assert (g_np >= low).all() and (g_np <= high).all(), (g_np, bounds)
            assert (w_np >= low).all() and (w_np <= high).all(), (w_np, bounds)
