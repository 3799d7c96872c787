"""An exact type test in a model method (rules/exact_types.py): ``type(x) is tuple`` -> ``mp_graph_safe.is_exactly(x,
tuple)``, which MindSpore's static graph folds, so a tensor input compiles only the branch it takes
(d-li14/octconv.pytorch's OctaveConv / Bottleneck / OctMobileNet: "The object is not callable", "Graph cycle
exists", "Data type conversion is not supported for a 'Parameter'" in GRAPH_MODE). Expected values come from
torch; the fixture is written here."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import collections
    import torch
    import torch.nn as nn

    Sizes = collections.namedtuple("Sizes", "high low")


    class Split(nn.Module):
        # a tensor, or a (high, low) pair; the low path exists only when the block was built with one
        def __init__(self, channels, low=False):
            super().__init__()
            self.conv_h = nn.Conv2d(channels, channels, 3, padding=1)
            self.conv_l = nn.Conv2d(channels, channels, 1) if low else None
            self.up = nn.Upsample(scale_factor=2, mode="nearest")

        def forward(self, x):
            x_h, x_l = x if type(x) is tuple else (x, None)
            if x_l is not None:
                x_h = x_h + self.up(self.conv_l(x_l))
            x_h = self.conv_h(x_h)
            return x_h if type(x) is not tuple else (x_h, x_l)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Split(4)
            self.second = Split(4, low=True)
            self.pool = nn.AvgPool2d(2)
            self.sizes = (1, 2)

        def forward(self, x):
            h = self.first(x)
            h, l = self.second((h, self.pool(x)))
            scale = 2.0 if type(self.sizes) in (tuple, list) else 3.0
            return h * scale + self.first(h)


    class NamedNet(Net):
        def __init__(self):
            super().__init__()
            self.sizes = Sizes(1, 2)  # a tuple subclass: the exact test is false for it
""")


def test_exact_type_tests_become_is_exactly():
    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    assert "x_h, x_l = x if mp_graph_safe.is_exactly(x, tuple) else (x, None)" in result.code
    assert "return x_h if not mp_graph_safe.is_exactly(x, tuple) else (x_h, x_l)" in result.code
    assert "2.0 if mp_graph_safe.is_exactly(self.sizes, (tuple, list)) else 3.0" in result.code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_exact_type_tests_compile_and_match(mode, tmp_path):
    result = convert_source(SOURCE)
    x = np.random.default_rng(0).standard_normal((2, 4, 8, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "exact_types", mode, rtol=1e-5,
                                atol=1e-5)


def test_exact_type_test_keeps_its_meaning_for_a_subclass(tmp_path):
    """PyNative: a named tuple is not exactly a tuple (scale 3.0, as in torch). A graph has no named tuples (MindSpore
    hands them to the graph as plain tuples), so this one is not run in GRAPH_MODE."""
    result = convert_source(SOURCE)
    x = np.random.default_rng(1).standard_normal((2, 4, 8, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "NamedNet", [x], tmp_path, "exact_named", "pynative",
                                rtol=1e-5, atol=1e-5)
