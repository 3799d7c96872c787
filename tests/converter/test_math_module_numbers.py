"""Arithmetic with a call of the standard library's ``math`` module: ``keys_scaled = keys / math.sqrt(d)``.

Every function of ``math`` (and ``cmath``) gives a Python number, a bool or a tuple of them, whatever it is given
(checked over each function of math on a 0-d torch tensor: only ``math.prod`` gives back a tensor). Before, such a call
was read as "another library's object" (the kind numpy's calls have), so the quotient of a function parameter by it
was taken for a foreign value, and the tensor methods read on it stayed torch's: ``keys_scaled.transpose(-2, -1)``
kept torch's two-axis swap, which MindSpore's Tensor.transpose runs in PyNative (an overload) but refuses in
GRAPH_MODE ("the number of axes must be equal to the dimension of Tensor": xLSTM's mLSTM backend, batch 24).
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import math
    import torch
    import torch.nn as nn


    def attend(queries, keys, values, dh):
        keys_scaled = keys / math.sqrt(dh)
        scores = queries @ keys_scaled.transpose(-2, -1)
        gain = math.log(dh) * scores
        return gain.softmax(dim=-1) @ values.transpose(1, 2).transpose(1, 2)


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(8, 24)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            shrink = math.cos(0.5) * math.exp(-1.0)
            out = attend(q, k, v, 8)
            return (out * shrink).transpose(0, 1) + math.floor(2.5)
""")


def test_a_quotient_by_a_math_call_is_a_tensor():
    code = convert_source(SOURCE).code
    assert "keys_scaled.swapaxes(axis0=-2, axis1=-1)" in code
    assert "transpose(-2" not in code


def test_math_prod_and_numpy_calls_keep_their_kinds():
    # math.prod multiplies what it is given; numpy's functions stay another library's values
    code = convert_source(textwrap.dedent("""\
        import math
        import numpy as np


        def f(sizes, base, dim):
            n = math.prod(sizes)
            scale = np.log(base) / (dim - 1)
            return n, scale.astype(np.float32)
    """)).code
    assert "scale.astype(np.float32)" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Head", [x], tmp_path, "math_numbers", mode,
                                rtol=1e-5, atol=1e-5)
