"""A model's method named like a module-level function it calls (lit-llama's ``build_rope_cache``, batch 15's first
contact): a static graph resolved the free name to the method itself ("Got an unexpected keyword argument
'seq_len'"); the converter calls the function through an alias bound after its definition, and the port matches
torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def scale(x, factor):
        return x * factor


    class Model(nn.Module):
        def __init__(self, n=4):
            super().__init__()
            self.n = n
            self.proj = nn.Linear(3, 3)

        def build_cache(self, x):
            return build_cache(seq_len=self.n, dim=x.shape[-1], base=2.0)

        def scale(self, x):
            return scale(x, factor=0.5)

        def forward(self, x):
            return self.scale(self.proj(x)) + self.build_cache(x)[: x.shape[0]]


    def build_cache(seq_len, dim, base):
        return torch.arange(seq_len * dim, dtype=torch.float32).reshape(seq_len, dim) / base
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_method_calling_the_module_function_of_its_name(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "_mp_build_cache = build_cache" in code and "_mp_scale = scale" in code, code
    x = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Model", [x], tmp_path, "shadow", mode, atol=1e-6)
