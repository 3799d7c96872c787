"""torch.linspace with no dtype (or ``dtype=None``) is MindSpore's own ``ops.linspace(start, end, steps)``
(transforms.functions.linspace_native_float32), the call mindport.runtime.math.linspace makes then: the runtime
exists to cast to a given dtype (ops.linspace has none) and to compute float64 itself. DINO's stochastic-depth rule
``torch.linspace(0, drop_path_rate, depth)`` and DDPM's ``torch.linspace(-1, total_timesteps - 1, steps + 1)`` were
mp_math.linspace. The converted module runs against torch in PyNative and GRAPH_MODE, dtypes compared too."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Ramps(nn.Module):
        def __init__(self, rate=0.1, depth=5, total=7):
            super().__init__()
            self.rate, self.depth, self.total = rate, depth, total

        def forward(self, x):
            a = torch.linspace(0, self.rate, self.depth)
            b = torch.linspace(-1, self.total - 1, self.total + 1, dtype=None)
            c = torch.linspace(0, 1, 5, dtype=torch.float64)
            d = torch.linspace(0., 3., steps=4) * x
            return a, b, c, d
""")


def test_a_float32_linspace_is_mindspores():
    code = convert_source(SOURCE).code
    assert "a = ops.linspace(0, self.rate, self.depth)" in code, code
    assert "b = ops.linspace(-1, self.total - 1, self.total + 1)" in code, code
    assert "c = mp_math.linspace(0, 1, 5, dtype=ms.float64)" in code, code
    assert "d = ops.linspace(0., 3., 4) * x" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_float32_linspaces_match_torch(mode, tmp_path):
    import mindspore as ms
    import torch

    x = np.random.default_rng(0).standard_normal(4).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Ramps", [x], tmp_path, "linspace", mode)
    net = load_module(code, tmp_path / f"m_ramps_{mode}.py", f"m_ramps_{mode}").Ramps()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = net(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    want = load_module(SOURCE, tmp_path / f"t_ramps_{mode}.py", f"t_ramps_{mode}").Ramps()(torch.from_numpy(x))
    assert [str(g.dtype) for g in got] == ["Float32", "Float32", "Float64", "Float32"]
    assert [w.dtype for w in want] == [torch.float32, torch.float32, torch.float64, torch.float32]
