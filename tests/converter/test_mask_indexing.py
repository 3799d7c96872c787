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


BYTE_SOURCE = textwrap.dedent("""\
    import torch


    def run(x, mask):
        return x[mask.byte()], x[(x > 0).byte()]
""")


def test_a_uint8_mask_index_reads_as_torch_reads_it(tmp_path):
    """torch's legacy uint8 mask (``logdet[self.mask_d.byte()]``, the block neural autoregressive flow): MindSpore
    refused the uint8 index; written ``.bool()``, the port reads the same elements."""
    import mindspore as ms
    import torch

    code = convert_source(BYTE_SOURCE).code
    assert "x[mask.bool()]" in code and ".byte()" not in code, code
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    mask = (rng.random((6, 4)) > 0.5).astype(np.float32)
    want = load_module(BYTE_SOURCE, tmp_path / "t_byte.py", "t_byte").run(torch.from_numpy(x), torch.from_numpy(mask))
    got = load_module(code, tmp_path / "m_byte.py", "m_byte").run(ms.Tensor(x), ms.Tensor(mask))
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
