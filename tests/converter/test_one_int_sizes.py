"""An int list given as one int where MindSpore's target takes a tuple only: simple-diffusion's
``timesteps.broadcast_to(sample.shape[0])`` ("broadcast_to(): argument 'shape' must be tuple of int but got int"),
``x.flip(d)`` with a dim held by a name ("Failed calling ReverseV2 with ReverseV2(axis=int)"). An int by its form
becomes a 1-tuple; a name that may hold an int or a sequence is decided when it runs. Compared with torch."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source

SOURCE = '''
import torch


def f(t, v, w, n, d, dims):
    return (t.broadcast_to(v.shape[0]), t.broadcast_to(n), t.broadcast_to(w.shape), v.flip(d), w.flip(dims),
            v.flip(0), t.broadcast_to(len(v)), w.broadcast_to(w.size()))
'''


@pytest.mark.parametrize("n,dims", [(3, (0, 1)), ((2, 3), [1])])
def test_one_int_as_a_size_or_dims_matches_torch(n, dims):
    result = convert_source(SOURCE, "sizes.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "broadcast_to(shape=(v.shape[0],))" in result.code and "broadcast_to(shape=w.shape)" in result.code
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(SOURCE, "<torch>", "exec"), t_ns)  # noqa: S102 - the test's own program
    exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
    t, v, w = (np.array([1.5], dtype=np.float32), np.arange(3, dtype=np.float32),
               np.arange(6, dtype=np.float32).reshape(2, 3))
    want = t_ns["f"](*(torch.from_numpy(a) for a in (t, v, w)), n, 0, dims)
    got = m_ns["f"](*(ms.Tensor(a) for a in (t, v, w)), n, 0, dims)
    for g, wv in zip(got, want):
        assert g.shape == tuple(wv.shape)
        np.testing.assert_array_equal(g.asnumpy(), wv.numpy())
