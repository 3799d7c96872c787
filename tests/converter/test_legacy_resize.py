"""Legacy (PyTorch 0.3-era) buffers built by resizing an empty tensor: ``x.data.new().resize_as_(x.data).fill_(0)``
(Cadene's vqa.pytorch masks), ``x.new().resize_(n, d).zero_()``, a statement ``z.resize_as_(t)``. torch.Tensor's
resize_/resize_as_ had no entry (MP103) and the line crashed in MindSpore ("'Tensor' object has no attribute 'new'").
Compared with torch: the filled results, and a shrink keeping the first elements in row-major order."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import torch

from mindport import convert_source

SOURCE = '''
import torch


def f(x):
    mask = x.data.new().resize_as_(x.data).fill_(0)
    y = x.new().resize_(2, 3).zero_()
    z = x.clone()
    z.resize_as_(torch.zeros(3, 2))
    w = x.clone().resize_((2, 2))
    return mask + x, y, z, w
'''


def test_legacy_resized_buffers_match_torch():
    result = convert_source(SOURCE, "legacy.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(SOURCE, "<torch>", "exec"), t_ns)  # noqa: S102 - the test's own program
    exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    want = t_ns["f"](torch.from_numpy(x))
    got = m_ns["f"](ms.Tensor(x))
    for w, g in zip(want, got):
        assert g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
