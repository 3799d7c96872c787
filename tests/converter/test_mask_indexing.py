"""A boolean mask of two dimensions followed by full slices (``widths[inside_mask, :]``, the neural spline flow's
bins): MindSpore 2.10 reads ``x[mask, :]`` of an (8, 2, 5) tensor with an (8, 2) mask as shape (n, 2) instead of
torch's (n, 5), with no error. Trailing full slices select nothing, so the converter drops them (IndexTransform);
reads and writes then match torch. The cases run on several masks, shapes and dtypes."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch


    def run(x, mask, keep):
        y = x.clone()
        y[mask, :] = 0
        z = x.clone()
        z[keep, :, :] = -1
        return x[mask, :], x[keep, :, :], x[keep, :], y, z
""")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_masked_reads_and_writes_match_torch(tmp_path, seed, dtype):
    import mindspore as ms
    import torch

    result = convert_source(SOURCE)
    assert "x[mask], x[keep], x[keep]" in result.code, result.code
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((6, 3, 5)) * 10).astype(dtype)
    mask, keep = rng.random((6, 3)) > 0.4, rng.random(6) > 0.5
    want = load_module(SOURCE, tmp_path / "t_mi.py", "t_mi").run(*(torch.from_numpy(v) for v in (x, mask, keep)))
    got = load_module(result.code, tmp_path / "m_mi.py", "m_mi").run(*(ms.Tensor(v) for v in (x, mask, keep)))
    for g, w in zip(got, want, strict=True):
        assert g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
