"""Issue 30 (native ports): an in-place method on a tensor nothing else holds is MindSpore's own out-of-place method
(TableCallTransform._fresh_out_of_place).

``torch.empty(n, n).fill_(-np.inf).triu_(1)`` (whisper's causal mask) and ``x.new_ones((i, j)).triu_(j - i + 1)``
(x-transformers') went through ``mp_inplace.triu_``, the runtime's write-back into the receiver. Nothing else holds
a creation's result, so its update is its out-of-place result, values and gradients; for the methods whose
out-of-place result always has the receiver's dtype (triu_, tril_, masked_fill_, index_fill_, neg_, unsqueeze_,
squeeze_, t_, transpose_) the out-of-place entry is used. ``mul_``/``add_`` (whose out-of-place form may promote),
a receiver another name holds and a statement keep the runtime's in-place form.

Compared with torch over diagonals, shapes and dtypes (float32, float64, int64, bool receivers)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source

SOURCE = textwrap.dedent('''
    import numpy as np
    import torch


    def whisper_mask(n, k):
        return torch.empty(n, n).fill_(-np.inf).triu_(k)


    def xt_mask(x, i, j):
        return x.new_ones((i, j)).triu_(j - i + 1).bool()


    def lower(n, k, dtype):
        return torch.ones(n, n + 1, dtype=dtype).tril_(k)


    def filled(x, mask):
        return torch.zeros_like(x).masked_fill_(mask, 2.5)


    def moved(x):
        return x.clone().unsqueeze_(0).transpose_(0, 1), torch.arange(6).reshape(2, 3).clone().t_()


    def kept(x, y):
        z = x.clone().mul_(2).add_(y)
        w = x.triu_(1)
        torch.ones(3).tril_()
        return z, w
''')


def _run(code: str) -> dict:
    namespace: dict = {}
    exec(compile(code, "<fixture>", "exec"), namespace)  # noqa: S102 - the fixture and its conversion
    return namespace


def _function(code: str, name: str) -> str:
    return code.split(f"def {name}")[1].split("\\ndef ")[0]


def test_fresh_receivers_take_the_out_of_place_method():
    code = convert_source(SOURCE).code
    for name in ("whisper_mask", "xt_mask", "lower", "filled", "moved"):
        body = code.split(f"def {name}")[1].split("\ndef ")[0]
        for method in ("triu_", "tril_", "masked_fill_", "unsqueeze_", "transpose_", "t_"):
            assert f"mp_inplace.{method}(" not in body, body
    kept = code.split("def kept")[1]
    assert "mp_inplace.mul_(" in kept and "mp_inplace.add_(" in kept and kept.count("mp_inplace.t") == 2, kept


@pytest.mark.parametrize("k", [-1, 0, 1, 2])
def test_fresh_out_of_place_matches_torch(k):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    want, got = _run(SOURCE), _run(code)
    np.testing.assert_array_equal(got["whisper_mask"](4, k).asnumpy(), want["whisper_mask"](4, k).numpy())
    for tdt, mdt in ((torch.float32, ms.float32), (torch.float64, ms.float64), (torch.int64, ms.int64),
                     (torch.bool, ms.bool_)):
        w, g = want["lower"](3, k, tdt), got["lower"](3, k, mdt)
        assert str(g.dtype).lower().replace("_", "") in str(w.dtype).replace("torch.", "").replace("_", "") \
            or (mdt == ms.bool_ and w.dtype == torch.bool), (g.dtype, w.dtype)
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
    x = np.random.default_rng(23).standard_normal((2, 3)).astype(np.float32)
    for i, j in ((2, 3), (3, 3), (1, 4)):
        w = want["xt_mask"](torch.from_numpy(x), i, j)
        g = got["xt_mask"](ms.Tensor(x), i, j)
        assert g.dtype == ms.bool_ and w.dtype == torch.bool
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
    mask = np.random.default_rng(k + 5).random((2, 3)) > 0.5
    np.testing.assert_array_equal(got["filled"](ms.Tensor(x), ms.Tensor(mask)).asnumpy(),
                                  want["filled"](torch.from_numpy(x), torch.from_numpy(mask)).numpy())
    for g, w in zip(got["moved"](ms.Tensor(x)), want["moved"](torch.from_numpy(x))):
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
