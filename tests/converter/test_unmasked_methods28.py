"""A softmax's input that comes through an own method of the class (LeViT's ``dots = self.apply_pos_bias(dots)``,
returning ``fmap + bias / self.scale``) can hold no row of all -inf when the method's every return is such a value
given its parameters are (native_facts.UnmaskedFacts._own_method): the layer is MindSpore's own ``nn.Softmax`` and
the function ``ops.softmax``, and the port needs no mindport import. A method that writes ``-inf``, rebinds its
parameter, or is overridden by a subclass in the file keeps the runtime softmax. The converted model is run against
torch (real torch, real MindSpore) in PyNative and GRAPH_MODE; the code checks cover the kept cases."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

LEVIT_LIKE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from einops import rearrange


    class Attention(nn.Module):
        def __init__(self, dim=8, heads=2, fmap=3):
            super().__init__()
            self.scale = dim ** -0.5
            self.heads = heads
            self.to_qk = nn.Linear(dim, dim * 2, bias=False)
            self.attend = nn.Softmax(dim=-1)
            self.pos_bias = nn.Embedding(fmap * fmap, heads)
            idx = torch.arange(fmap * fmap)
            self.register_buffer('pos_indices', (idx[:, None] - idx[None, :]).abs())

        def apply_pos_bias(self, fmap):
            bias = self.pos_bias(self.pos_indices)
            bias = rearrange(bias, 'i j h -> () h i j')
            return fmap + (bias / self.scale)

        def forward(self, x):
            q, k = self.to_qk(x).chunk(2, dim=-1)
            q, k = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), (q, k))
            dots = torch.einsum('b h i d, b h j d -> b h i j', q, k) * self.scale
            dots = self.apply_pos_bias(dots)
            return self.attend(dots), F.softmax(self.apply_pos_bias(dots * 2), dim=-1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_softmax_behind_an_own_method_is_native_and_matches(mode, tmp_path):
    result = convert_source(LEVIT_LIKE)
    assert not result.diagnostics, result.diagnostics
    assert "mindport" not in result.code, result.code
    assert "nn.Softmax(axis=-1)" in result.code and "ops.softmax(" in result.code, result.code
    x = np.random.default_rng(0).standard_normal((2, 9, 8)).astype(np.float32)
    assert_port_matches_in_mode(LEVIT_LIKE, result.code, "Attention", [x], tmp_path, "levit_like", mode,
                                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("change", [
    # the method writes -inf: a row may be all -inf
    ("return fmap + (bias / self.scale)", "return fmap.masked_fill(self.pos_indices > 100, float('-inf'))"),
    # the parameter rebound in the method: not the caller's value any more
    ("bias = rearrange(bias, 'i j h -> () h i j')", "fmap = self.mask_it(fmap)"),
    # a parameter with a default, the call giving fewer arguments
    ("def apply_pos_bias(self, fmap):", "def apply_pos_bias(self, fmap, extra=None):"),
])
def test_own_method_that_may_mask_keeps_the_runtime_softmax(change):
    source = LEVIT_LIKE.replace(*change)
    assert source != LEVIT_LIKE
    code = convert_source(source).code
    assert "mp_nn.Softmax(" in code and "mp_F.softmax(" in code, code


def test_own_method_given_a_value_that_may_hold_inf_keeps_the_runtime_layer():
    """An argument that may hold -inf (a buffer) makes the layer's input one too (the functional softmax's input,
    ``self.apply_pos_bias(dots * 2)``, is a product: none)."""
    source = LEVIT_LIKE.replace("dots = self.apply_pos_bias(dots)", "dots = self.apply_pos_bias(self.pos_mask)")
    code = convert_source(source).code
    assert "mp_nn.Softmax(" in code and "ops.softmax(" in code, code


def test_method_overridden_by_a_subclass_keeps_the_runtime_softmax():
    source = LEVIT_LIKE + textwrap.dedent("""

        class Masked(Attention):
            def apply_pos_bias(self, fmap):
                return fmap.masked_fill(self.pos_indices > 0, float('-inf'))
    """)
    code = convert_source(source).code
    assert "mp_nn.Softmax(" in code and "mp_F.softmax(" in code, code
