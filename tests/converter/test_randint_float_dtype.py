"""torch.randint with a dtype that is not an integer one (TD-MPC2's ShiftAug: ``torch.randint(0, 2 * pad + 1,
size=(n, 1, 1, 2), device=x.device, dtype=x.dtype)`` with a float32 image): torch draws integers and stores them as
that dtype, MindSpore's ops.randint refuses it ("For 'randint', the 'dtype' must be an int type, but got Float32").
A call that gives a dtype goes to mindport.runtime.math.randint (int64 draws, cast to it); one without stays
MindSpore's own ops.randint. Compared with torch: dtype, shape, and every value an integer in
[low, high) (the draws themselves come from different streams)."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import torch

from mindport import convert_source

SOURCE = textwrap.dedent("""
    import torch


    def draw(x, pad):
        a = torch.randint(0, 2 * pad + 1, size=(64, 1, 1, 2), device=x.device, dtype=x.dtype)
        b = torch.randint(3, 9, (5, 7), dtype=torch.float64)
        c = torch.randint(4, (6,), dtype=torch.long)
        d = torch.randint(-2, 2, (8,), dtype=torch.int32)
        e = torch.randint(5, (3,))
        return a, b, c, d, e
""")


def test_randint_with_any_dtype_matches_torchs_dtype_and_range():
    result = convert_source(SOURCE, "draw.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert result.code.count("mp_math.randint(") == 4 and "ops.randint(0, 5, (3,))" in result.code, result.code
    ns: dict = {}
    exec(compile(result.code, "draw_ms.py", "exec"), ns)  # noqa: S102 - our own converted program
    t_ns: dict = {}
    exec(compile(SOURCE, "draw_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    expected = t_ns["draw"](torch.zeros(2, 3), 3)
    got = ns["draw"](ms.Tensor(np.zeros((2, 3), np.float32)), 3)
    bounds = [(0, 7), (3, 9), (0, 4), (-2, 2), (0, 5)]
    for g, e, (lo, hi) in zip(got, expected, bounds):
        values = g.asnumpy()
        assert values.dtype == e.numpy().dtype and values.shape == tuple(e.shape)
        assert (values == np.round(values)).all() and values.min() >= lo and values.max() < hi
    assert len(np.unique(got[0].asnumpy())) > 1  # drawn, not a constant
