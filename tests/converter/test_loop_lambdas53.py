"""A lambda created inside a ``for`` loop's body of a model method: MindSpore 2.10's GRAPH_MODE compiles the method
to one returning None, no error (measured: ``for i in range(2): y = (lambda t: t * 2)(x); out = out + y`` then
``return out`` gives None); the converter writes the lambda as a nested def (LoopLambdaTransform). The slice: a
lambda bound to a name, one called where it is written, one with a default, and the form the converter itself gives
an einops pattern whose keyword holds a call (``rearrange(x, 'b (h w) c -> b c h w', h=int(math.sqrt(n)))`` in a
loop, native54's finding); torch's numbers in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

LOOP = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Refine(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            out = x
            for i in range(3):
                mix = lambda t, k=0.5: t * k
                y = self.proj(mix(x)) + (lambda t: t * t)(x)
                if i > 0:
                    y = (lambda t, s: t - s)(y, 1.0)
                out = out + y
            return out
""")

EINOPS = textwrap.dedent("""\
    import math

    import torch.nn as nn
    from einops import rearrange


    class Stages(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv2d(4, 4, 3, padding=1) for _ in range(2)])

        def forward(self, x):
            for conv in self.convs:
                n = x.shape[1]
                x = rearrange(x, 'b (h w) c -> b c h w', h=int(math.sqrt(n)))
                x = conv(x)
                x = rearrange(x, 'b c h w -> b (h w) c')
            return x
""")


def test_the_lambdas_are_defs():
    code = convert_source(LOOP).code
    assert "lambda" not in code and "def mix(t, k=0.5):" in code and "def _mp_loop_fn" in code, code
    code = convert_source(EINOPS).code
    assert "lambda" not in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_loop_lambdas_match_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(LOOP, convert_source(LOOP).code, "Refine", [x], tmp_path, "refine", mode,
                                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_einops_keyword_calls_in_a_loop_match_torch(tmp_path, mode):
    x = np.random.default_rng(1).standard_normal((2, 9, 4)).astype(np.float32)
    assert_port_matches_in_mode(EINOPS, convert_source(EINOPS).code, "Stages", [x], tmp_path, "stages", mode,
                                rtol=1e-5, atol=1e-5)
