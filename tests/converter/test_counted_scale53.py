"""Issue 30 (native53): ``nn.Upsample`` / ``F.interpolate`` whose ``scale_factor`` is a positive int by construction,
not a literal: ``2 ** i`` (and ``+``/``*`` of such terms) where ``i`` is a loop's count from zero, ``for i, d in
enumerate(dims)`` or ``for i in range(n)`` in a comprehension or a ``for`` statement and bound nowhere else in its
body (native_facts.loop_index; table_calls._positive_int), is MindSpore's own ``nn.Upsample`` / ``ops.interpolate``
as a literal integral scale factor is (``float(2 ** i)`` with ``recompute_scale_factor=True``: segformer's decoder
``nn.Sequential(nn.Conv2d(dim, decoder_dim, 1), nn.Upsample(scale_factor = 2 ** i)) for i, dim in
enumerate(dims)``). Proven against torch in PyNative and GRAPH_MODE; a name that may be negative (a parameter, a
range from -1, a rebound index) keeps the runtime's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Net(nn.Module):
        def __init__(self, dims=(3, 3, 3)):
            super().__init__()
            self.ups = nn.ModuleList([nn.Sequential(nn.Conv2d(d, 2, 1), nn.Upsample(scale_factor=2 ** i))
                                      for i, d in enumerate(dims)])
            self.smooth = nn.ModuleList([nn.Upsample(scale_factor=(1 + i) * 2, mode="bilinear") for i in range(2)])

        def forward(self, x):
            outs = [up(x) for up in self.ups]
            for i in range(1, 3):
                outs.append(F.interpolate(x, scale_factor=2 ** i, mode="bilinear", align_corners=True))
            outs.extend(s(x) for s in self.smooth)
            return tuple(outs)
""")


def test_counted_scale_factors_are_mindspores_own():
    code = convert_source(SOURCE).code
    assert "mp_nn" not in code and "mp_F" not in code, code
    assert "nn.Upsample(scale_factor=float(2 ** i), recompute_scale_factor=True)" in code, code
    assert "scale_factor=float((1 + i) * 2), mode=\"bilinear\", recompute_scale_factor=True" in code, code
    assert "ops.interpolate(x, scale_factor=float(2 ** i)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_counted_scale_factors_match_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, f"counted_{mode}", mode, atol=1e-5)


@pytest.mark.parametrize("loop", [
    "for i in range(-1, 2):",                   # may be negative: 2 ** -1 is 0.5
    "for i in range(2):\n            i = i - 1",  # rebound in the body
])
def test_a_scale_that_may_not_be_a_positive_int_keeps_the_runtime(loop):
    source = SOURCE.replace("for i in range(1, 3):", loop)
    code = convert_source(source).code
    assert "mp_F.interpolate(x, scale_factor=2 ** i" in code, code


def test_a_parameter_exponent_keeps_the_runtime():
    source = SOURCE.replace("def forward(self, x):", "def forward(self, x, i=1):").replace(
        "for i in range(1, 3):\n            outs.append(", "outs.append(")
    code = convert_source(source).code
    assert "mp_F.interpolate(x, scale_factor=2 ** i" in code, code


def test_a_name_read_in_a_comprehensions_first_iterable_is_the_outer_one():
    source = textwrap.dedent("""
        import torch.nn.functional as F


        def f(x, i):
            return [y for i in [F.interpolate(x, scale_factor=2 ** i)] for y in range(i.ndim)]
    """)
    code = convert_source(source).code
    assert "mp_F.interpolate(x, scale_factor=2 ** i)" in code, code
