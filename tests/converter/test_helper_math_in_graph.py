"""A module-level helper that ``forward`` calls computes a size with a bare ``sqrt`` of ``from math import sqrt`` and
then unpacks with einops: karras_unet's forced weight normalisation (trials ddpm_lucid/karras_unet), ``weight, ps =
pack_one(weight, 'o *')``, ``normed * sqrt(weight.numel() / weight.shape[0])``, ``unpack_one(normed, ps, 'o *')``.
GRAPH_MODE ran the bare ``sqrt`` through its JIT Fallback: the tensor scaled by it became an interpreted value,
``mp_einops.unpack``'s ``isinstance`` test of it was no constant, einops' own branch was compiled and its ``raise
EinopsError`` stopped the graph ("Unsupported exception type: EinopsError"); with that branch out, the unpack plan
could not read the shape ("__len__() should return >= 0"). MathCallTransform now writes ``math.sqrt`` in module-level
functions too, and ``mp_einops``' foreign-input test is the constant False in a graph. The slice: that helper and a
Conv2d using it, once per mode against torch, and the rewrite itself. Expected values are torch's outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

WEIGHT_NORMED = textwrap.dedent("""\
    from math import sqrt
    import torch
    import torch.nn as nn
    from einops import pack, unpack

    def pack_one(t, pattern):
        return pack([t], pattern)

    def unpack_one(t, ps, pattern):
        return unpack(t, ps, pattern)[0]

    def l2norm(t, dim=-1, eps=1e-4):
        return torch.nn.functional.normalize(t, dim=dim, eps=eps)

    def normalize_weight(weight, eps=1e-4):
        weight, ps = pack_one(weight, 'o *')
        normed_weight = l2norm(weight, eps=eps)
        normed_weight = normed_weight * sqrt(weight.numel() / weight.shape[0])
        return unpack_one(normed_weight, ps, 'o *')

    class Conv2d(nn.Module):
        def __init__(self, dim_in=3, dim_out=4, kernel_size=3, eps=1e-4):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(dim_out, dim_in, kernel_size, kernel_size))
            self.eps = eps
            self.fan_in = dim_in * kernel_size ** 2

        def forward(self, x):
            weight = normalize_weight(self.weight, eps=self.eps) / sqrt(self.fan_in)
            return torch.nn.functional.conv2d(x, weight, padding='same')
""")


def test_bare_sqrt_in_a_module_level_helper_reads_the_module():
    code = convert_source(WEIGHT_NORMED).code
    assert "normed_weight * math.sqrt(weight.numel() / weight.shape[0])" in code, code
    assert "import math" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_weight_normed_conv_matches_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    assert_port_matches_in_mode(WEIGHT_NORMED, convert_source(WEIGHT_NORMED).code, "Conv2d", [x], tmp_path,
                                "weight_normed", mode, rtol=1e-5, atol=1e-5)
