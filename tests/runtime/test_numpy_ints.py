"""numpy integers as tensor indices and slice bounds (WaveRNN: ``m[:, :, self.indent:-self.indent]`` with
``self.indent = pad * np.cumprod(scales)[-1]``): torch takes them, MindSpore's indexing refuses them; the guard
mindport.runtime.numpy_ints installs (with any runtime module) turns them into ints. Compared with torch."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

import mindport.runtime.layers  # noqa: F401 - any runtime module installs the guard
from mindport import convert_source

X = np.arange(4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5)
N = np.int64(2)

INDICES = [
    (slice(None), slice(None, N)),
    (slice(None), slice(N, -N)),
    (slice(None, None, np.int32(2)),),
    N,
    (N, np.int64(1)),
    (Ellipsis, np.int64(-1)),
    (slice(np.int64(1), None), None, N),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_a_numpy_integer_indexes_as_in_torch(index):
    expected = torch.tensor(X)[index].numpy()
    np.testing.assert_array_equal(ms.Tensor(X)[index].asnumpy(), expected)


@pytest.mark.parametrize("index", INDICES[:4], ids=repr)
def test_a_numpy_integer_index_assigns_as_in_torch(index):
    t = torch.tensor(X)
    t[index] = -1.0
    p = ms.Parameter(ms.Tensor(X), name="p")
    p[index] = -1.0
    np.testing.assert_array_equal(p.asnumpy(), t.numpy())


def test_a_size_computed_with_numpy_slices_a_converted_model():
    source = textwrap.dedent("""
        import numpy as np
        import torch
        import torch.nn as nn


        class Crop(nn.Module):
            def __init__(self, scales=(2, 3), pad=1):
                super().__init__()
                self.indent = pad * np.cumprod(scales)[-1]
                self.conv = nn.Conv1d(3, 3, 1)

            def forward(self, x):
                return self.conv(x)[:, :, self.indent:-self.indent]
    """)
    result = convert_source(source, "crop.py")
    t_ns: dict = {}
    exec(compile(source, "crop_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    m_ns: dict = {}
    exec(compile(result.code, "crop_ms.py", "exec"), m_ns)  # noqa: S102 - its conversion
    t_model, m_model = t_ns["Crop"](), m_ns["Crop"]()
    from mindport.migrator.weights import transfer_weights

    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((2, 3, 20)).astype(np.float32)
    with torch.no_grad():
        expected = t_model(torch.tensor(x)).numpy()
    got = m_model(ms.Tensor(x)).asnumpy()
    assert got.shape == expected.shape == (2, 3, 8)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


RANGES = [(Ellipsis, range(1)), (Ellipsis, range(3)), range(1, 3), (slice(None), range(0, 6, 2)),
          (range(2), slice(None), 1)]


@pytest.mark.parametrize("index", RANGES, ids=repr)
def test_a_range_indexes_as_in_torch(index):
    """STID: ``input_data[..., range(self.input_dim)]``; torch reads a range as the list of its ints."""
    expected = torch.tensor(X)[index].numpy()
    got = ms.Tensor(X)[index].asnumpy()
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    t, p = torch.tensor(X), ms.Parameter(ms.Tensor(X), name="p")
    t[index] = -1.0
    p[index] = -1.0
    np.testing.assert_array_equal(p.asnumpy(), t.numpy())
