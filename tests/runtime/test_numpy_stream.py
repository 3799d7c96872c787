"""MindSpore's layers are built without moving numpy's global random stream (mindport.runtime.numpy_stream).

MindSpore's initializers seed themselves from numpy's global stream and its recurrent layers draw their weights
from it; torch's never touch it. tonyduan/normalizing-flows' LU 1x1 map draws ``np.random.randn(dim, dim)`` in its
constructor after ``nn.Linear``s were built (first contact batch 3: max relative difference 0.66, the permutation a
plain tensor attribute, not a weight). Each check here fails with MindSpore's own seeding."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch
from mindspore import nn
from mindspore.common.initializer import Normal, XavierUniform, initializer

from mindport import transfer_weights
from tests.converter.port_check import torch_and_converted

BUILDS = {
    "Dense": lambda: nn.Dense(4, 3),
    "Conv2d": lambda: nn.Conv2d(4, 3, 3),
    "Embedding": lambda: nn.Embedding(5, 3),
    "LSTM": lambda: nn.LSTM(4, 3, num_layers=2),
    "GRUCell": lambda: nn.GRUCell(4, 3),
    "initializer": lambda: ms.Parameter(initializer(XavierUniform(), (3, 4))),
    "Normal": lambda: initializer(Normal(), (3, 4)).init_data(),
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_building_leaves_numpys_stream_where_it_was(name):
    import mindport.runtime.containers  # noqa: F401 - what converted code loads

    np.random.seed(0)
    want = np.random.rand(3)
    np.random.seed(0)
    BUILDS[name]()
    np.testing.assert_array_equal(np.random.rand(3), want)


def test_set_seed_repeats_the_weights_and_layers_differ():
    import mindport.runtime.containers  # noqa: F401

    def build(seed):
        ms.set_seed(seed)  # torch.manual_seed(seed)'s conversion: torch's generator restarts, so do the weights
        return nn.Dense(4, 4).weight.asnumpy(), nn.Dense(4, 4).weight.asnumpy(), nn.LSTM(2, 2).w_ih_list[0].asnumpy()

    first, second, other = build(7), build(7), build(8)
    for a, b, c in zip(first, second, other):
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    assert not np.array_equal(first[0], first[1])  # two layers: other weights


SOURCE = textwrap.dedent("""
    import numpy as np
    import torch
    import torch.nn as nn


    class Flow(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(dim, 8), nn.Tanh(), nn.Linear(8, dim))
            self.P = torch.tensor(np.random.permutation(dim))  # a plain attribute: no weight carries it
            self.W = torch.tensor(np.random.randn(dim, dim), dtype=torch.float32)

        def forward(self, x):
            return self.net(x)[:, self.P] @ self.W
""")


def test_a_constructor_drawing_from_numpy_after_building_layers_matches_torch(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(SOURCE, "flow", tmp_path, monkeypatch)
    np.random.seed(0)
    t_model = t_ns["Flow"]()
    np.random.seed(0)
    m_model = m_ns["Flow"]()
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_model(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
