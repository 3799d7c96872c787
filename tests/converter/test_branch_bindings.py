"""Names a model method binds on one branch of an ``if`` and reads later (``if use_cache: start = ...``) are bound
to None first, so the converted Cell compiles in GRAPH_MODE (which compiles both branches and refused it with
``UnboundLocalError ... not defined in false branch``) and still gives torch's numbers in both modes."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, use_cache=True):
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
            self.use_cache = use_cache

        def forward(self, x):
            if self.use_cache:
                start = 1
            h = self.proj(x)
            for i, layer in enumerate(self.layers):
                if i == 0:
                    e = layer(h)
                if i > 0:
                    h = layer(h) + e
            if x.shape[0] > 1:
                scale = 2.0
            else:
                scale = 3.0
            if self.use_cache:
                h = h[:, start:]
            return h * scale
""")


def test_the_binding_is_added_where_a_branch_misses_it():
    code = convert_source(SOURCE).code
    body = code.split("def construct(self, x):\n", 1)[1]
    assert body.startswith("        start = None\n        if self.use_cache:\n            start = 1\n        h = self.proj(x)\n"
                           "        e = None\n        for i, layer")
    assert "scale = None" not in code  # bound on both branches


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_compiles_and_matches_torch(tmp_path, mode):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = convert_source(SOURCE).code
    torch_net = load_module(SOURCE, tmp_path / "t_bb.py", "t_bb").Net().eval()
    ms_net = load_module(code, tmp_path / f"m_bb_{mode}.py", f"m_bb_{mode}").Net()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = ms_net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
