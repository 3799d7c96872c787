"""``it = iter(xs)`` read with ``next(it)`` / ``next(it, default)`` in a model's method compiles in GRAPH_MODE and
gives torch's numbers. MindSpore 2.10's graph has no ``next`` with a default (x-transformers' ``cache =
next(iter_attn_cache, None)`` per layer: "For 'Next', the number of input should be 1, but got 2", 3 trials entries)
and ``next(it)`` in a loop over sub-Cells does not compile either ("The Map operator don't support Closure with free
variable yet", pure MindSpore, measured). IterNextTransform writes the iterator as the list and an index.
The slice: an x-transformers-shaped decoder whose cache list is empty or filled by the caller (the default taken on
every layer / never), a list read with ``next`` without a default inside a call's arguments, a list shorter than the
loop (the default taken part-way), and the forms left as written. Expected values are torch's own outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

NEXTS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def exists(v):
        return v is not None


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

        def forward(self, x, cache=None):
            attn_cache = []
            if exists(cache):
                attn_cache = [cache, cache * 2, cache * 3]
            iter_attn_cache = iter(attn_cache)
            scales = [x * 0.5, x * 0.25, x * 0.125]
            scale_iter = iter(scales)
            short = [x + 1.0]
            short_iter = iter(short)
            outs = []
            for layer in self.layers:
                past = next(iter_attn_cache, None)
                h = layer(x) if not exists(past) else layer(x) + past
                x = torch.tanh(h + next(scale_iter))
                extra = next(short_iter, x)
                outs.append(x - extra)
            return torch.stack(outs)
""")

LEFT = textwrap.dedent("""\
    import torch.nn as nn


    class Net(nn.Module):
        def forward(self, x):
            xs = [x, x]
            it = iter(xs)
            y = x if next(it, None) is None else x + 1
            return y, it

        def g(self, x):
            xs = [x, x]
            it = iter(xs)
            while next(it, None) is not None:
                x = x + 1
            return x
""")


def test_the_iterators_are_indices():
    code = convert_source(NEXTS).code
    assert "next(" not in code and "iter(" not in code, code
    assert "_mp_iter_attn_cache_at = 0" in code


def test_other_uses_are_left_as_written():
    code = convert_source(LEFT).code
    assert code.count("iter(xs)") == 2 and code.count("next(it, None)") == 2, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("with_cache", [False, True])
def test_iter_next_matches_torch(tmp_path, mode, with_cache):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    inputs = [x, rng.standard_normal((2, 4)).astype(np.float32)] if with_cache else [x]
    assert_port_matches_in_mode(NEXTS, convert_source(NEXTS).code, "Net", inputs, tmp_path, f"nexts{int(with_cache)}",
                                mode, atol=1e-5)
