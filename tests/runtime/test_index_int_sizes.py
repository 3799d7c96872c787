"""0-d integer tensors as sizes, and setitem values with extra leading size-1 axes (mindport.runtime.numpy_ints),
as torch takes them.

torch reads anything with ``__index__`` as an int in a size: TensoRF builds its planes with
``torch.randn((1, n, gridSize[i], 1))``, ``gridSize`` a LongTensor. MindSpore 2.10 refuses a 0-d tensor in
``ops.randn`` ("For primitive[StandardNormal], the input argument[shape] must be a type of {Int32, Int64}, but got
Tensor[Int64]"), ``rand``, ``randint``, ``full``, ``normal``, ``pad``, ``split``, ``chunk``, ``narrow``, adaptive
pools, ``tril_indices`` (measured, PyNative). torch's setitem drops the value's leading size-1 axes before
broadcasting it (DA-RNN: ``X_encoded[:, t, :] = h_n``, ``h_n`` an LSTM's (1, B, H) state); MindSpore's BroadcastTo
refuses the higher rank. Expected values come from torch."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import transfer_weights
from tests.converter.port_check import torch_and_converted

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Planes(nn.Module):
        def __init__(self, grid=(5, 6, 7)):
            super().__init__()
            self.gridSize = torch.LongTensor(grid)
            self.planes = self.init_planes(4, self.gridSize)
            self.ones = nn.Parameter(torch.full((2, self.gridSize[0]), 0.5))

        def init_planes(self, n, gridSize):
            return nn.ParameterList([nn.Parameter(0.1 * torch.randn((1, n, gridSize[i], 1))) for i in range(3)])

        def forward(self, x):
            k = self.gridSize[0]
            y = F.pad(x, (k, k))
            a, b = torch.split(y, [k, y.shape[-1] - k], dim=-1)
            z = F.adaptive_avg_pool1d(y, self.gridSize[1])
            w = torch.narrow(y, -1, 0, self.gridSize[2])
            return a, b, z, w, self.ones, [p.shape[2] for p in self.planes]


    class Encoder(nn.Module):
        def __init__(self, steps=4, features=3, hidden=5):
            super().__init__()
            self.steps, self.hidden = steps, hidden
            self.lstm = nn.LSTM(features, hidden)

        def forward(self, X):
            out = X.new_zeros(X.size(0), self.steps, self.hidden)
            h = torch.zeros(1, X.size(0), self.hidden)
            c = torch.zeros(1, X.size(0), self.hidden)
            for t in range(self.steps):
                self.lstm.flatten_parameters()
                _, state = self.lstm(X[:, t].unsqueeze(0), (h, c))
                h, c = state[0], state[1]
                out[:, t, :] = h
            return out
""")


def test_zero_d_integer_tensor_sizes_build_and_match_torch(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(SOURCE, "index_int_sizes", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Planes"]().eval()
    m_model = m_ns["Planes"]()  # before: TypeError from StandardNormal at ops.randn((1, n, gridSize[i], 1))
    m_model.set_train(False)
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    got = m_model(ms.Tensor(x))
    for g, w in zip(got[:5], want[:5]):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert [int(s) for s in got[5]] == [int(s) for s in want[5]] == [5, 6, 7]


@pytest.mark.parametrize("call", [
    lambda n, mod, ns: mod.randn((1, n, 2)).shape,
    lambda n, mod, ns: mod.rand((n, 1)).shape,
    lambda n, mod, ns: mod.randint(0, 4, (n, 2)).shape,
    lambda n, mod, ns: tuple(mod.full((n, 2), 1.5).shape),
    lambda n, mod, ns: [tuple(p.shape) for p in mod.chunk(ns.ones((6, 2)), n)],
    lambda n, mod, ns: tuple(mod.tril_indices(n, n).shape),
])
def test_size_functions_take_a_zero_d_tensor_as_torch_does(call):
    import mindport.runtime.containers  # noqa: F401 - what converted code loads

    want = call(torch.tensor(3), torch, torch)
    got = call(ms.Tensor(3, ms.int64), ms.ops, ms.ops)
    assert tuple(got) == tuple(want)


def test_setitem_value_with_leading_ones_matches_torch(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(SOURCE, "leading_ones_setitem", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Encoder"]().eval()
    m_model = m_ns["Encoder"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    got = m_model(ms.Tensor(x))  # before: BroadcastTo "input's rank should be less equal ..."
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_setitem_value_with_leading_ones_matches_torch_in_a_graph(tmp_path, monkeypatch):
    """DA-RNN's encoder in GRAPH_MODE: the graph compiles MindSpore's own setitem, which failed in RemoveExpandedDims
    ("Input array must have the same size across all dimensions") before numpy_ints replaced it."""
    t_ns, m_ns = torch_and_converted(SOURCE, "leading_ones_setitem_graph", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Encoder"]().eval()
    m_model = m_ns["Encoder"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = m_model(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-6)


# value shape, index: the index kinds whose graph setitem takes a tensor value (tuple, int, slice, ..., int tensor,
# list), with leading size-1 axes to drop, and values that have none (left as they are)
GRAPH_SETITEMS = [((1, 1, 3), (0,)), ((1, 2, 3), (slice(None), 1)), ((1, 3), (1, 0)), ((3,), (0, 1)),
                  ((1, 1, 2, 3), 1), ((1, 2, 3), slice(0, 1)), ((1, 1, 2, 2, 3), Ellipsis), ((1, 3), (0, 1)),
                  ((1, 1, 2, 3), "tensor"), ((1, 2, 2, 3), "list"), ((2, 3), 0), ((1, 1, 3), (0, slice(0, 1)))]


@pytest.mark.parametrize("value_shape, index", GRAPH_SETITEMS, ids=[str(i) for i in range(len(GRAPH_SETITEMS))])
def test_setitem_leading_ones_are_dropped_in_a_graph(value_shape, index):
    from mindspore import nn

    import mindport.runtime.containers  # noqa: F401

    t_index = {"tensor": torch.tensor([1]), "list": [0, 1]}.get(index, index) if isinstance(index, str) else index
    t = torch.zeros(2, 2, 3)
    v = torch.arange(1.0, 1.0 + float(np.prod(value_shape))).reshape(value_shape)
    t[t_index] = v

    class Assign(nn.Cell):
        def construct(self, data, value):
            if index == "tensor":
                data[ms.Tensor([1])] = value
            elif index == "list":
                data[[0, 1]] = value
            else:
                data[index] = value
            return data

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = Assign()(ms.ops.zeros((2, 2, 3)), ms.Tensor(v.numpy()))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(got.asnumpy(), t.numpy())


def test_setitem_leading_ones_only_are_dropped():
    import mindport.runtime.containers  # noqa: F401

    for value_shape, index in [((1, 1, 3), (0,)), ((1, 2, 3), (slice(None), 1)), ((1, 3), (1, 0)), ((3,), (0, 1))]:
        t = torch.zeros(2, 2, 3)
        v = torch.arange(float(np.prod(value_shape))).reshape(value_shape)
        t[index] = v
        m = ms.ops.zeros((2, 2, 3))
        m[index] = ms.Tensor(v.numpy())
        np.testing.assert_array_equal(m.asnumpy(), t.numpy())


def test_a_zero_d_tensor_outside_a_size_stays_a_tensor():
    import mindport.runtime.containers  # noqa: F401

    t = torch.flatten(torch.tensor(3))
    m = ms.ops.flatten(ms.Tensor(3, ms.int64), start_dim=0)
    assert tuple(m.shape) == tuple(t.shape) == (1,)
    np.testing.assert_array_equal(m.asnumpy(), t.numpy())
    np.testing.assert_array_equal(ms.ops.full((2,), ms.Tensor(1.5, ms.float32), dtype=ms.float32).asnumpy(),
                                  torch.full((2,), 1.5).numpy())


@pytest.mark.parametrize("mask_rank", [1, 2, 3])
def test_bool_mask_setitem_of_the_masked_rows_matches_torch_in_a_graph(mask_rank):
    """TensoRF's ``rgb[app_mask] = valid_rgbs``, ``valid_rgbs`` computed from ``x[app_mask]``: a row count known only at
    run time. MindSpore's graph setitem failed ("For 'BroadcastTo' ... x_shape: {-1, 3, 1}"); it is a MaskedScatter."""
    from mindspore import nn

    import mindport.runtime.containers  # noqa: F401

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    mask = rng.random((4, 5, 3)[:mask_rank]) > 0.5
    t = torch.full((4, 5, 3), -1.0)
    t[torch.from_numpy(mask)] = torch.from_numpy(x)[torch.from_numpy(mask)] * 2 + 1

    class Scatter(nn.Cell):
        def construct(self, x, mask):
            out = ms.ops.full((4, 5, 3), -1.0, dtype=ms.float32)
            out[mask] = x[mask] * 2 + 1
            return out

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = Scatter()(ms.Tensor(x), ms.Tensor(mask))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got.asnumpy(), t.numpy(), rtol=1e-6, atol=1e-6)
