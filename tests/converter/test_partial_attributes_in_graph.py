"""A ``functools.partial`` a model's ``__init__`` keeps on the model and ``forward`` calls compiles in GRAPH_MODE and
gives torch's numbers. MindSpore 2.10 runs functools' partial object held on a Cell as Python (JIT Fallback); what it
returns is an interpreted object and the next operation fails: x-transformers' Attend (``softmax_fn = partial(
F.softmax, dim=-1)``; ``self.attn_fn = partial(softmax_fn, dtype=torch.float32) if not qk_norm else softmax_fn``, then
an einsum) gave "The tensor should have only one element, but got 0" (trials xtransformers/decoder_rotary, vit,
enc_dec; pure-MindSpore repro /tmp/graph27-t/pp.py in the write-up graph27.md). Such partials become
``mp_graph_safe.partial`` (an ``ms.jit_class``); those PartialAttributeTransform already writes as a lambda stay
lambdas, and a partial only called in ``__init__`` stays functools'.
The slice: the Attend shape (a partial of a local partial through a conditional expression, an einsum after it, both
branches of the condition), a partial given by ``and`` called with a keyword replacing the partial's, and the
runtime class against functools' own (flattening, keyword order, attributes). Expected values are torch's outputs."""
from __future__ import annotations

import functools
import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

ATTEND = textwrap.dedent("""\
    from functools import partial
    import functools
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def scaled(x, s=1.0, b=0.0):
        return x * s + b


    class Attend(nn.Module):
        def __init__(self, qk_norm=False):
            super().__init__()
            softmax_fn = partial(F.softmax, dim=-1)
            self.attn_fn = partial(softmax_fn, dtype=torch.float32) if not qk_norm else softmax_fn
            self.act = not qk_norm and functools.partial(scaled, s=2.0, b=1.0)
            norm = partial(nn.LayerNorm, eps=1e-6)
            self.norm = norm(8)

        def forward(self, q, k, v):
            sim = torch.einsum('b h i d, b h j d -> b h i j', q, k)
            attn = self.attn_fn(sim)
            out = torch.einsum('b h i j, b h j d -> b h i d', attn, v)
            if self.act:
                out = self.act(out, b=0.5)
            return self.norm(out)


    class AttendQKNorm(Attend):
        def __init__(self):
            super().__init__(qk_norm=True)
""")


def test_kept_partials_become_the_runtime_class():
    code = convert_source(ATTEND).code
    assert "softmax_fn = mp_graph_safe.partial(" in code, code
    assert "self.attn_fn = mp_graph_safe.partial(softmax_fn, dtype=ms.float32) if not qk_norm" in code, code
    assert "self.act = not qk_norm and mp_graph_safe.partial(scaled, s=2.0, b=1.0)" in code, code
    assert "norm = partial(" in code, code  # only called in __init__: functools' own


def test_the_runtime_partial_means_functools():
    from mindport.runtime.graph_safe import partial

    def f(*args, **kwargs):
        return args, kwargs

    for inner in (functools.partial(f, 1, a=1), partial(f, 1, a=1)):
        ours, theirs = partial(inner, 2, b=2, a=3), functools.partial(inner, 2, b=2, a=3)
        assert ours(3, b=4) == theirs(3, b=4)
        assert (ours.func, ours.args, ours.keywords) == (f, (1, 2), {"a": 3, "b": 2})
    inner = functools.partial(f, 1, a=1)
    ours, theirs = partial(inner, 2, b=2, a=3), functools.partial(inner, 2, b=2, a=3)
    assert (ours.func, ours.args, ours.keywords) == (theirs.func, theirs.args, theirs.keywords)
    with pytest.raises(TypeError):
        partial(3)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls", ["Attend", "AttendQKNorm"])
def test_attend_matches_torch(tmp_path, mode, cls):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 2, 5, 8)).astype(np.float32) for _ in range(3))
    assert_port_matches_in_mode(ATTEND, convert_source(ATTEND).code, cls, [q, k, v], tmp_path, f"attend_{cls}", mode,
                                rtol=1e-5, atol=1e-5)
