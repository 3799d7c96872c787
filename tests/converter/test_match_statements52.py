"""``match`` statements in code a static graph compiles (hand52: PeaBrane/mamba-tiny's ``selective_scan(...,
mode=...)``, called by the model's forward, ms-failed in GRAPH_MODE: MindSpore's parser has no ``match``). Value,
singleton and or-patterns, guards and the wildcard become an if/elif/else chain; a computed subject is evaluated
once; with no wildcard, a name only the cases bind is bound to None first (a graph compiles every branch); a
capture pattern is flagged MP107 and left as written. The converted models run against torch in PyNative
and in GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    def scan(x, mode):
        match mode:
            case "cumsum":
                y = x.cumsum(1)
            case "cummax" | "running":  # the running maximum
                y = torch.cummax(x, 1).values
            case _:
                y = x
        return y


    def scan_strict(x, mode):
        match mode:
            case "cumsum":
                y = x.cumsum(1)
            case "cummax":
                y = torch.cummax(x, 1).values
        return y


    class Strict(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return scan_strict(self.fc(x), "cumsum") + scan_strict(x, "cummax")


    class Scanner(nn.Module):
        def __init__(self, mode="cummax", scale=None):
            super().__init__()
            self.mode = mode
            self.scale = scale
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = scan(self.fc(x), self.mode)
            match self.scale if self.scale else None:
                case None:
                    return h
                case 2 if h.ndim == 3:
                    return h * 2
            return -h


    class Cumsum(Scanner):
        def __init__(self):
            super().__init__("cumsum", 2)


    class Plain(Scanner):
        def __init__(self):
            super().__init__("none", 3)
""")

CAPTURE = textwrap.dedent("""
    import torch

    def pick(pair):
        match pair:
            case (a, b):
                return a + b
        return pair
""")


def test_value_patterns_become_an_if_chain():
    result = convert_source(SOURCE)
    code = result.code
    assert "match " not in code, code
    assert 'if mode == "cumsum":' in code and 'elif mode == "cummax" or mode == "running":' in code, code
    assert "_mp_subject = self.scale if self.scale else None" in code, code
    assert 'elif _mp_subject == 2 and (h.ndim == 3):' in code, code
    assert "    y = None\n    if mode == \"cumsum\":" in code, code  # no wildcard: y bound by the cases only
    assert not [d for d in result.diagnostics if d.code == "MP107"]


def test_capture_pattern_is_flagged():
    result = convert_source(CAPTURE)
    assert "match pair:" in result.code
    assert [d for d in result.diagnostics if d.code == "MP107"]


@pytest.mark.parametrize("cls", ["Scanner", "Cumsum", "Plain", "Strict"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_match_ports_match_torch(mode, cls, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"match52_{cls}", mode, rtol=1e-5, atol=1e-5)
