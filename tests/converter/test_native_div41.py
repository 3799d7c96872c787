"""torch.div / torch.divide / Tensor.div / Tensor.divide with no rounding_mode (or ``rounding_mode=None``) is
MindSpore's own ``ops.div`` (the tables' ``switch``): mindport.runtime.math.div exists for a rounding_mode ('floor' is
the FloorDiv primitive; a number divisor with one stops Tensor.div under the synchronous launch) and calls ``ops.div``
itself when none is given. A literal rounding_mode, or one known only at run time, keeps the runtime's (DINO's
drop_path ``x.div(keep_prob)``, sooftware/attentions' ``torch.div(score, score.sum(dim=-1).unsqueeze(dim=-1))``). The
converted module runs against torch in PyNative and GRAPH_MODE, on float and integer tensors and a number divisor."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Divides(nn.Module):
        def __init__(self, keep_prob=0.8, mode="floor"):
            super().__init__()
            self.keep_prob = keep_prob
            self.mode = mode

        def forward(self, x, n, m):
            a = torch.div(x, x.sum(dim=-1).unsqueeze(dim=-1))
            b = x.div(self.keep_prob)
            c = torch.divide(n, m)
            d = n.div(m, rounding_mode=None)
            e = n.divide(3)
            f = n.div(m, rounding_mode="floor")
            g = torch.div(x, 0.3, rounding_mode=self.mode)
            return a, b, c, d, e, f, g
""")


def test_a_division_with_no_rounding_mode_is_mindspores_div():
    code = convert_source(SOURCE).code
    # the sum's value over an empty extent is never read (absorbed by the division with x: test_absorbed_sums42)
    assert "a = ops.div(x, ops.sum(x, dim=-1).unsqueeze(dim=-1))" in code, code
    assert "b = ops.div(x, other=self.keep_prob)" in code, code
    assert "c = ops.div(n, m)" in code and "d = ops.div(n, other=m, rounding_mode=None)" in code, code
    assert "e = ops.div(n, other=3)" in code, code
    assert "f = mp_math.div(n, other=m, rounding_mode=\"floor\")" in code, code
    assert "g = mp_math.div(x, 0.3, rounding_mode=self.mode)" in code, code
    assert code.count("mp_math.div(") == 2 and code.count("ops.div(") == 5, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_native_divisions_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, (2, 3, 4)).astype(np.float32)
    n = rng.integers(-9, 10, (3, 4)).astype(np.int64)
    m = rng.integers(1, 5, (3, 4)).astype(np.int64)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Divides", [x, n, m], tmp_path, "div", mode)
