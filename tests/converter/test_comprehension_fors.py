"""Comprehensions with two ``for`` clauses in a model's forward: MindSpore's static graph takes one ``for`` per
comprehension ("The 'generators' supports 1 'comprehension'"), so the converter nests them (ComprehensionForsTransform)
and writes its own doubled padding without one (a convolution built in forward with its padding held by a name:
TimeMixer's down-sampling; its weights are drawn there, so the output is its shape); the ports match torch in PyNative and compiled.
A module's function is compiled with the method that calls it (VITS' commons.convert_pad_shape flattening F.pad's
amounts with two fors: GRAPH_MODE refused "The 'generators' supports 1 'comprehension'"): it is nested there too."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

PAIRS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Pairs(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            xs = [self.proj(x), x * 2, x - 1]
            scales = (1.0, -0.5)
            prods = [a * s for a in xs if a is not None for s in scales if s != 0]
            mixed = torch.stack(tuple(a * b + c for a in xs for b in xs[:2] for c in (x, -x)))
            return torch.stack(prods), mixed
""")

PADDED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Down(nn.Module):
        def __init__(self):
            super().__init__()
            self.pad = (1, 2)

        def forward(self, x):
            padding = self.pad
            conv = nn.Conv2d(3, 3, kernel_size=3, padding=padding, bias=False)
            return conv(x).shape[-1] + x.sum()
""")


def test_nested_comprehensions_written():
    code = convert_source(PAIRS).code
    assert "mp_graph_safe.joined([[a * s for s in scales if s != 0] for a in xs if a is not None])" in code
    assert "for b in xs[:2] for" not in code and "mp_graph_safe.joined([mp_graph_safe.joined([[" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_two_for_comprehensions_match(tmp_path, mode):
    code = convert_source(PAIRS).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(PAIRS, code, "Pairs", [x], tmp_path, "pairs", mode, atol=1e-5)


def test_padding_held_by_a_name_has_one_for():
    code = convert_source(PADDED).code
    assert "for _ in (0, 1)" not in code and "sum([[v, v] for v in padding], [])" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_padding_held_by_a_name_matches(tmp_path, mode):
    code = convert_source(PADDED).code
    x = np.random.default_rng(0).standard_normal((1, 3, 6, 8)).astype(np.float32)
    assert_port_matches_in_mode(PADDED, code, "Down", [x], tmp_path, "padded", mode, atol=1e-5)


HELPER = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def convert_pad_shape(pad_shape):
        l = pad_shape[::-1]
        pad_shape = [item for sublist in l for item in sublist]
        return pad_shape


    class Padded(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 3, 3)

        def forward(self, x):
            x = F.pad(x, convert_pad_shape([[0, 0], [0, 0], [2, 1]]))
            return self.conv(x)
""")


def test_module_function_comprehension_nested():
    code = convert_source(HELPER).code
    assert "pad_shape = mp_graph_safe.joined([[item for item in sublist] for sublist in l])" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_module_function_comprehension_matches(tmp_path, mode):
    code = convert_source(HELPER).code
    x = np.random.default_rng(0).standard_normal((2, 2, 6)).astype(np.float32)
    assert_port_matches_in_mode(HELPER, code, "Padded", [x], tmp_path, "helper49", mode, atol=1e-6)


def test_joined_is_linear_in_pynative():
    from mindport.runtime.graph_safe import joined

    parts = [[i, -i] for i in range(3)]
    assert joined(parts) == [0, 0, 1, -1, 2, -2] and joined([]) == []
