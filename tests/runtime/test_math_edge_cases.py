"""mindport.runtime.math where MindSpore 2.10 answers otherwise without a word: window functions of length 0/1
(float64 whatever dtype says), float64 linspace (computed in float32), and isin(assume_unique=True) on inputs that
are not unique (torch's sorting path answers something other than membership, and code that relies on it gets it)."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport.runtime import math as mp_math

DTYPES = [(None, None), (torch.float32, ms.float32), (torch.float64, ms.float64)]


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "kaiser_window"])
@pytest.mark.parametrize("length", [0, 1, 2, 7])
@pytest.mark.parametrize(("t_dtype", "m_dtype"), DTYPES)
def test_windows_keep_the_dtype_for_every_length(name, length, t_dtype, m_dtype):
    for periodic in (True, False):
        expected = getattr(torch, name)(length, periodic, dtype=t_dtype)
        got = getattr(mp_math, name)(length, periodic, dtype=m_dtype)
        assert str(got.dtype).lower() == str(expected.dtype).split(".")[-1]
        np.testing.assert_allclose(got.asnumpy(), expected.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("start", "end", "steps"), [(-1.5, 1.5, 19), (2.0, -7.0, 10), (0, 1, 1), (0, 1, 0),
                                                     (0.1, 0.7, 1000)])
def test_float64_linspace_is_float64_precise(start, end, steps):
    expected = torch.linspace(start, end, steps, dtype=torch.float64).numpy()
    got = mp_math.linspace(start, end, steps, dtype=ms.float64).asnumpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(("n", "m"), [(60, 40), (6, 3), (5, 40), (12, 12)])
def test_isin_assume_unique_gives_torchs_answer_on_repeated_values(n, m):
    gen = torch.Generator().manual_seed(n * m)
    elements = torch.randint(0, 4, (n,), generator=gen).float()
    test = torch.randint(0, 4, (m,), generator=gen).float()
    for assume_unique in (False, True):
        for invert in (False, True):
            expected = torch.isin(elements, test, assume_unique=assume_unique, invert=invert)
            got = mp_math.isin(ms.Tensor(elements.numpy()), ms.Tensor(test.numpy()), assume_unique=assume_unique,
                               invert=invert)
            np.testing.assert_array_equal(got.asnumpy(), expected.numpy())


EINSUM_DTYPES = [(np.int64, np.float32), (np.int32, np.float64), (np.float16, np.float32), (np.float32, np.float64),
                 (np.int64, np.int64)]


@pytest.mark.parametrize(("a_dtype", "b_dtype"), EINSUM_DTYPES)
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_einsum_promotes_mixed_operands_as_torch(a_dtype, b_dtype, mode):
    """``einsum('i, j -> i j', torch.arange(n), inv_freq)`` (rotary embeddings: TimeSformer's): torch promotes the
    operands (float32 here); MindSpore's MatMul refused int64 with float32. Each pair, both call orders, in both
    modes (the promotion is computed from the dtypes, at compile time in a graph)."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(3) * 4).astype(a_dtype)
    b = (rng.standard_normal((3, 4)) * 4).astype(b_dtype)

    class Both(ms.nn.Cell):
        def construct(self, x, y):
            return mp_math.einsum("i, i j -> j i", x, y), mp_math.einsum("i j, i -> i j", y, x)

    net = Both()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = net(ms.Tensor(a), ms.Tensor(b))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    want = (torch.einsum("i, i j -> j i", torch.from_numpy(a), torch.from_numpy(b)),
            torch.einsum("i j, i -> i j", torch.from_numpy(b), torch.from_numpy(a)))
    for g, w in zip(got, want, strict=True):
        assert str(g.dtype).lower() == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=2e-3, atol=1e-3)
