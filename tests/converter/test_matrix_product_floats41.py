"""torch's matrix products (torch.matmul, mm, bmm, einsum) take operands of one dtype only (a float32 against an
int64, a float64 or a bool operand raises: "expected m1 and m2 to have the same dtype"), so one operand floating by
construction makes the result floating for the float facts (native_facts._ONE_DTYPE_PRODUCTS in FloatFacts), as
``q @ k`` already was. CoCa's ``sim = einsum('b h i d, b h j d -> b h i j', q, k)`` of a projected ``q`` then
``sim - sim.amax(dim=-1, keepdim=True)`` is ops.amax; a product of two parameters keeps the runtime's. The converted
module runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Scores(nn.Module):
        def __init__(self):
            super().__init__()
            self.to_q = nn.Linear(4, 4)

        def forward(self, x, k):
            q = self.to_q(x)
            sim = torch.einsum('b i d, b j d -> b i j', q, k)
            a = sim - sim.amax(dim=-1, keepdim=True)
            b = torch.log(torch.matmul(q, k.transpose(1, 2)).abs() + 1)
            c = torch.bmm(k, k.transpose(1, 2)).amax(dim=-1)
            return a, b, c
""")


def test_a_matrix_product_of_a_float_is_floating_for_the_facts():
    code = convert_source(SOURCE).code
    assert "a = sim - ops.amax(sim, axis=-1, keepdims=True)" in code, code
    assert "b = ops.log(" in code, code
    assert "c = mp_math.amax(ops.bmm(k, k.swapaxes(" in code, code  # a parameter of unknown dtype alone


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_matrix_product_floats_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    k = rng.standard_normal((2, 5, 4)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Scores", [x, k], tmp_path, "products", mode, rtol=1e-5, atol=1e-5)
