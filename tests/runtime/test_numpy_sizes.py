"""numpy integers as shapes, paddings and sizes (mindport.runtime.numpy_ints), as torch takes them.

Model code computes sizes with numpy (``np.prod(obs_shape)``, ``np.int64`` arithmetic, shapes read from numpy
arrays); torch takes anything with ``__index__``. MindSpore 2.10's argument checks refuse them (measured: an
``initializer`` shape, so ``nn.LayerNorm((n,))``; ``ops.pad``, ``ops.split``, ``ops.flatten``, ``ops.arange`` ...;
the layer constructors' own sizes too, which the runtime does not wrap: see numpy_ints). The converted program below
fails without the runtime's wrappers; with them it computes torch's values, PyNative and compiled."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import transfer_weights
from tests.converter.port_check import torch_and_converted

SOURCE = textwrap.dedent("""
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Net(nn.Module):
        def __init__(self, obs_shape=(4, 6, 6)):
            super().__init__()
            hidden = np.prod(obs_shape[:1]) * np.int64(2)
            self.pad = np.int64(1)
            self.conv = nn.Conv2d(4, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.norm = nn.LayerNorm(hidden)
            self.proj = nn.Linear(8, 8)
            self.embed = nn.Embedding(10, 8)
            self.fc = nn.Linear(8, 5)

        def forward(self, x, ids):
            y = self.pool(torch.relu(self.bn(self.conv(x))))
            y = F.pad(y, (self.pad, self.pad))
            y = torch.flatten(y[:, :, :, 1:-1], start_dim=np.int64(2))
            y = self.norm(y.transpose(1, 2))
            y = self.proj(y)
            y = y + self.embed(ids)
            a, b = torch.split(self.fc(y), [np.int64(2), np.int64(3)], dim=-1)
            return torch.softmax(a, dim=-1), b
""")


def _pair(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(SOURCE, "numpy_net", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model, m_model = t_ns["Net"]().eval(), m_ns["Net"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    return t_model, m_model


@pytest.mark.parametrize("graph", [False, True])
def test_numpy_integer_sizes_build_and_match_torch(graph, tmp_path, monkeypatch):
    t_model, m_model = _pair(tmp_path, monkeypatch)
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
    ids = np.random.default_rng(1).integers(0, 10, (2, 9))
    with torch.no_grad():
        want = t_model(torch.from_numpy(x), torch.from_numpy(ids))
    call = ms.jit(m_model.construct) if graph else m_model
    got = call(ms.Tensor(x), ms.Tensor(ids))
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_an_initializer_shape_of_numpy_integers():
    import mindport.runtime.containers  # noqa: F401 - what converted code loads
    from mindspore.common import initializer as init_module

    tensor = init_module.initializer(init_module.Normal(), (np.int64(20), 8)).init_data()
    assert tensor.shape == (20, 8)
    assert ms.ops.pad(ms.ops.ones((1, 2)), [np.int64(1), np.int32(0)]).shape == (1, 3)
