"""mindport.runtime.signal against torch.signal.windows (every window, lengths 0/1/2/odd/even, sym and periodic,
float32 and float64, the windows' own parameters), and names under torch.functional / torch.distributions' defining
modules finding their public entries."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.signal.windows as torch_windows

import mindport
from mindport.runtime import signal as mp_signal

WINDOWS = [("hann", {}), ("hamming", {}), ("blackman", {}), ("nuttall", {}), ("cosine", {}), ("bartlett", {}),
           ("gaussian", {"std": 0.9}), ("exponential", {"tau": 3.0}), ("general_hamming", {"alpha": 0.6}),
           ("general_cosine", {"a": [0.46, 0.23, 0.31]}), ("kaiser", {"beta": 8.0}), ("kaiser", {})]


@pytest.mark.parametrize(("name", "kwargs"), WINDOWS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(WINDOWS)])
@pytest.mark.parametrize(("t_dtype", "m_dtype"), [(None, None), (torch.float64, ms.float64)])
def test_window_matches_torch(name, kwargs, t_dtype, m_dtype):
    for length in (0, 1, 2, 5, 10):
        for sym in (True, False):
            expected = getattr(torch_windows, name)(length, sym=sym, dtype=t_dtype, **kwargs)
            got = getattr(mp_signal, name)(length, sym=sym, dtype=m_dtype, **kwargs)
            assert tuple(got.shape) == tuple(expected.shape)
            assert str(got.dtype).lower() == str(expected.dtype).split(".")[-1]
            tol = (1e-12, 1e-14) if t_dtype == torch.float64 else (1e-5, 1e-6)  # float64 must stay float64-exact
            np.testing.assert_allclose(got.asnumpy(), expected.numpy(), rtol=tol[0], atol=tol[1])


def test_exponential_center_and_the_errors_torch_raises():
    np.testing.assert_allclose(mp_signal.exponential(10, center=2.0, sym=False).asnumpy(),
                               torch_windows.exponential(10, center=2.0, sym=False).numpy(), rtol=1e-5, atol=1e-6)
    for fn, kwargs in (("exponential", {"center": 1.0}), ("exponential", {"tau": 0.0}), ("gaussian", {"std": -1.0}),
                       ("kaiser", {"beta": -1.0})):
        with pytest.raises(ValueError):
            getattr(torch_windows, fn)(5, **kwargs)
        with pytest.raises(ValueError):
            getattr(mp_signal, fn)(5, **kwargs)


def test_names_under_defining_modules_find_public_entries():
    source = ("import torch\n"
              "x = torch.arange(10.0)\n"
              "parts = torch.functional.split(x, 3)\n"
              "y = torch.distributions.transforms.ExpTransform()(x)\n"
              "w = torch.signal.windows.hann(8, sym=False)\n")
    result = mindport.convert_source(source)
    assert not result.diagnostics
    torch_ns: dict = {}
    ms_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)  # noqa: S102 - our own snippet
    exec(compile(result.code, "<ms>", "exec"), ms_ns)  # noqa: S102 - the converter's output of it
    for a, b in zip(torch_ns["parts"], ms_ns["parts"], strict=True):
        np.testing.assert_array_equal(b.asnumpy(), a.numpy())
    np.testing.assert_allclose(ms_ns["y"].asnumpy(), torch_ns["y"].numpy(), rtol=1e-5)
    np.testing.assert_allclose(ms_ns["w"].asnumpy(), torch_ns["w"].numpy(), rtol=1e-5, atol=1e-6)


def test_atleast_and_meshgrid_take_torchs_argument_forms():
    from mindport.runtime import math as mp_math

    x, y = torch.tensor(1.5), torch.randn(2, 3)
    for n in ("1d", "2d", "3d"):
        t_fn, m_fn = getattr(torch, f"atleast_{n}"), getattr(mp_math, f"atleast_{n}")
        assert m_fn() == t_fn() == ()
        for args in ((x,), (x, y), ([x, y],)):
            expected, got = t_fn(*args), m_fn(*(ms.Tensor(a.numpy()) if isinstance(a, torch.Tensor)
                                                 else [ms.Tensor(b.numpy()) for b in a] for a in args))
            expected = expected if isinstance(expected, tuple) else (expected,)
            got = got if isinstance(got, tuple) else (got,)
            assert len(expected) == len(got)
            for a, b in zip(expected, got):
                np.testing.assert_array_equal(b.asnumpy(), a.numpy())
    a, b = torch.tensor([1, 2]), torch.tensor([3, 4, 5])
    for args in ((a, b), ([a, b],)):
        for indexing in ("ij", "xy"):
            expected = torch.meshgrid(*args, indexing=indexing)
            m_args = [ms.Tensor(v.numpy()) for v in (args[0] if len(args) == 1 else args)]
            got = mp_math.meshgrid(*([m_args] if len(args) == 1 else m_args), indexing=indexing)
            for e, g in zip(expected, got, strict=True):
                np.testing.assert_array_equal(g.asnumpy(), e.numpy())
