"""Python's ``math`` functions of sizes in a model's methods compile in GRAPH_MODE and give torch's numbers. A graph
ran ``math.sqrt(tokens.shape[1])`` through its JIT Fallback: an interpreted result, a tensor reshaped with it one too,
and the next layer's ``b, n, _, h = *x.shape, heads`` failed ("The starred unpack merge input must be sequence, but
got AbstractAny": vit-pytorch's PiT, trials entry vit/pit). MathCallTransform computes such calls while the graph
compiles (``mp_graph_safe.math_call``). The slice: PiT's pooling (``from math import sqrt``, in a lambda) followed by
a layer unpacking the shape, ``import math`` with ``log``/``ceil``/``floor``/``pow`` of sizes as a scale, both modes
vs torch's own outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

POOL = textwrap.dedent("""\
    import math
    from math import sqrt

    import torch
    import torch.nn as nn


    class Attend(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = 2
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            b, n, _, h = *x.shape, self.heads
            scale = math.log(n) + math.ceil(n / 3) - math.floor(math.pow(h, 1.5))
            return self.proj(x).reshape(b, n, h, -1).sum(-1) * scale


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.attend = Attend()

        def forward(self, tokens):
            grid = (lambda t, g: t.reshape(t.shape[0], g, t.shape[1] // g, t.shape[2]))(tokens, int(sqrt(tokens.shape[1])))
            side = int(math.sqrt(grid.shape[1] * grid.shape[2]))
            x = grid.reshape(grid.shape[0], side * side, -1)
            return self.attend(x)
""")


def test_the_calls_are_math_calls():
    code = convert_source(POOL).code
    assert "mp_graph_safe.math_call(sqrt, tokens.shape[1])" in code, code
    assert "mp_graph_safe.math_call(math.log, n)" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_math_calls_match_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 16, 4)).astype(np.float32)
    assert_port_matches_in_mode(POOL, convert_source(POOL).code, "Net", [x], tmp_path, "pool", mode, atol=1e-5)
