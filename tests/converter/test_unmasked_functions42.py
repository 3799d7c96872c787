"""A call of a module-level function of the file is a softmax input with no row of all -inf when every return of the
function is one given the parameters it is handed such values for (native_facts.UnmaskedFacts._own_function, as
_own_method reads an own method): segment-anything's ``attn = add_decomposed_rel_pos(attn, q, self.rel_pos_h,
self.rel_pos_w, (H, W), (H, W))`` returns ``(attn.view(...) + rel_h[...] + rel_w[...]).view(...)`` of einsum products,
so its ViT attention's ``attn.softmax(dim=-1)`` is MindSpore's own ``ops.softmax``. A parameter handed anything else (a
buffer, ``self.rel_pos_h``) is not assumed: read only as a product's operand it is harmless, read as the value it
keeps the runtime's; a function that writes ``-inf`` keeps it too. The converted module runs against torch in
PyNative and GRAPH_MODE, on a mask with a fully masked row."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def decomposed_bias(attn, q, table, size):
        b, n = size
        rel = torch.einsum("bic,jc->bij", q, table)
        attn = (attn.view(b, n, n) + rel[:, :, :]).view(b, n, n)
        return attn


    def masked(attn, mask):
        return attn.masked_fill(mask, float("-inf"))


    class Rel(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.table = nn.Parameter(torch.randn(5, d))
            self.register_buffer("bias", torch.zeros(2, 5, 5))

        def forward(self, x, mask):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            attn = (q * 0.5) @ k.transpose(-2, -1)
            attn = decomposed_bias(attn, q, self.table, (2, 5))
            a = attn.softmax(dim=-1)
            b = masked(attn, mask).softmax(dim=-1)
            c = decomposed_bias(self.bias, q, self.table, (2, 5)).softmax(dim=-1)
            return a @ v, b @ v, c
""")


def test_a_module_function_of_unmasked_values_is_mindspores_softmax():
    code = convert_source(SOURCE).code
    assert "a = ops.softmax(attn, axis=-1)" in code, code
    assert "b = mp_F.softmax(masked(attn, mask), dim=-1)" in code, code  # the function writes -inf
    assert "c = mp_F.softmax(decomposed_bias(self.bias," in code, code  # a buffer may hold -inf


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_module_function_softmaxes_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.zeros((2, 5, 5), bool)
    mask[0, 1] = True  # a fully masked row: -inf throughout in b's input
    mask[1, :, 3] = True
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Rel", [x, mask], tmp_path, "unmasked_functions", mode,
                                rtol=1e-5, atol=1e-6)
