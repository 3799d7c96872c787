"""Copies of one tensor joined (``torch.cat([t] * n, dim=d)``, ``torch.stack([t] * n, dim=d)``) are the tensor tiled
(RepeatedJoinTransform): the same values and dtype as torch over axes, signs of the axis, counts and dtypes, in
PyNative and in GRAPH_MODE, where a list of a thousand copies exceeded the call depth (capsule routing)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

JOINS = [
    "torch.cat([x] * 3, dim=0)", "torch.cat([x] * 2, dim=1)", "torch.cat([x] * 4, 2)", "torch.cat(2 * [x], dim=-1)",
    "torch.cat((x,) * 3, dim=-2)", "torch.cat([x] * n, dim=-3)", "torch.stack([x] * 3, dim=0)",
    "torch.stack([x] * 2, dim=2)", "torch.stack([x] * n, dim=3)", "torch.stack([x] * 2, dim=-1)",
    "torch.stack([x] * 3, dim=-4)", "torch.cat([x.relu()] * 2, dim=-1)",
    # an element read once: its axis swapped with the last, tiled, swapped back
    "torch.cat([x.relu()] * 2, dim=0)", "torch.cat([x.unsqueeze(1)] * n, dim=1)", "torch.stack([x * 2] * 3, dim=1)",
    "torch.cat([x[:, :2]] * 3, dim=2)",
]


CASES = [(join, dtype) for join in JOINS for dtype in ("float32", "int64", "bool")
         if not (dtype == "bool" and ("relu" in join or "* 2]" in join))]  # torch refuses relu of a bool tensor


@pytest.mark.parametrize("join, dtype", CASES)
def test_a_join_of_copies_matches_torch(join, dtype, tmp_path):
    import importlib.util

    import mindspore as ms
    import torch

    source = f"import torch\n\n\ndef f(x, n):\n    return {join}\n"
    code = convert_source(source).code
    assert "ops.tile(" in code and "cat" not in code.replace("concat", "") and "stack" not in code, code
    path = tmp_path / "m_joins.py"
    path.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("m_joins", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    x = (x > 0) if dtype == "bool" else x.astype(dtype) if dtype != "int64" else (x * 10).astype(np.int64)
    t_ns: dict = {}
    exec(compile(source, "t_joins", "exec"), t_ns)
    want = t_ns["f"](torch.from_numpy(x), 2).numpy()
    got = module.f(ms.Tensor(x), 2).asnumpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


CAPSULES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Routing(nn.Module):
        def __init__(self, in_channels=1152, num_units=4, unit_size=3):
            super().__init__()
            self.in_channels = in_channels
            self.W = nn.Parameter(torch.randn(1, in_channels, num_units, unit_size, 2) * 0.1)

        def forward(self, x):
            batch_size = x.size(0)
            W = torch.cat([self.W] * batch_size, dim=0)
            u_hat = torch.matmul(W, x)
            s = u_hat.sum(dim=1, keepdim=True)
            return torch.cat([s] * self.in_channels, dim=1) * u_hat
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_capsule_routing_joins_compile_in_a_graph(tmp_path, mode):
    # kazukiii/caps-net-pytorch's CapsuleLayer: [v_j] * 1152 copies; GRAPH_MODE: "Exceed function call depth limit"
    code = convert_source(CAPSULES).code
    x = np.random.default_rng(1).standard_normal((2, 1152, 4, 2, 1)).astype(np.float32)
    assert_port_matches_in_mode(CAPSULES, code, "Routing", [x], tmp_path, "routing", mode, atol=1e-5)


def test_other_joins_are_left_to_the_table():
    source = "import torch\n\n\ndef f(x, y, d):\n    return torch.cat([x, y] * 2), torch.cat([x] * 2, dim=d), torch.cat([x] + [y])\n"
    code = convert_source(source).code
    assert "tile" not in code, code
