"""torch.randint's ``randint(high, size)`` overload (Informer's ProbAttention: ``torch.randint(L_K, (L_Q,
sample_k))``). Bound to the full signature ``(low=0, high=None, size=None)`` it read as low=L_K, high=(L_Q,
sample_k) and MindSpore raised "'size' must be a tuple, but got None". Written out and through the runtime adapter
(``*args`` at the call), every form gives torch's shape, dtype and range."""
from __future__ import annotations

import numpy as np
import torch

from mindport import convert_source

SOURCE = """import torch


def draws(n, args):
    return (torch.randint(n, (n, 2)), torch.randint(10, size=(400,)), torch.randint(2, 7, (300,)),
            torch.randint(low=1, high=4, size=(200,)), torch.randint(n, (3,), dtype=torch.int32),
            torch.randint(*args))
"""


def test_every_randint_form_matches_torch_in_shape_dtype_and_range():
    result = convert_source(SOURCE)
    assert not result.diagnostics
    torch_ns: dict = {}
    exec(compile(SOURCE, "torch", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(result.code, "converted", "exec"), ms_ns)
    want = torch_ns["draws"](6, (5, (50,)))
    got = ms_ns["draws"](6, (5, (50,)))
    for w, g in zip(want, got):
        g = g.asnumpy()
        assert g.shape == tuple(w.shape) and str(g.dtype) == str(w.dtype).replace("torch.", "")
    for (low, high), g in zip([(0, 6), (0, 10), (2, 7), (1, 4), (0, 6), (0, 5)], got):
        values = g.asnumpy()
        assert values.min() >= low and values.max() < high
        assert len(np.unique(values)) > 1
    assert torch.equal(torch.tensor([w.shape[0] for w in want]), torch.tensor([6, 400, 300, 200, 3, 50]))
