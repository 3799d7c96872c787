"""An einops function handed on as an argument compiles in GRAPH_MODE and gives torch's numbers. x-transformers'
attention reshapes with ``maybe(rearrange)(t, 'b n (h d) -> b h n d', h=kv_h)``: the reference was left einops' own
function, which reached the graph through ``maybe`` ("Unsupported statement 'Try'", einops/einops.py, trials entries
xtransformers/decoder_rotary and vit once their earlier causes were fixed). EinopsPatternTransform now hands on the
runtime's function. The slice: x-transformers' ``maybe`` wrapper (``functools.wraps``, a None passed through) over
``rearrange``, and ``map(partial(...))``-free reference forms left to other tests; both modes vs torch's own output."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

MAYBE = textwrap.dedent("""\
    from functools import wraps

    import torch
    import torch.nn as nn
    from einops import rearrange, repeat


    def exists(v):
        return v is not None


    def maybe(fn):
        @wraps(fn)
        def inner(x, *args, **kwargs):
            if not exists(x):
                return x
            return fn(x, *args, **kwargs)
        return inner


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.to_k = nn.Linear(8, 8)
            self.to_v = nn.Linear(8, 8)

        def forward(self, x, r=None):
            k, v = self.to_k(x), self.to_v(x)
            k, v, r = tuple(maybe(rearrange)(t, 'b n (h d) -> b h n d', h=2) for t in (k, v, r))
            out = (k * v).sum(-1)
            out = maybe(repeat)(out, 'b h n -> b h n c', c=2)
            return rearrange(out, 'b h n c -> b n (h c)')
""")


def test_the_references_are_the_runtime_functions():
    code = convert_source(MAYBE).code
    assert "maybe(mp_einops.rearrange)" in code and "maybe(mp_einops.repeat)" in code, code
    assert "from einops" not in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_einops_references_match_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    assert_port_matches_in_mode(MAYBE, convert_source(MAYBE).code, "Net", [x], tmp_path, "maybe", mode, atol=1e-5)
