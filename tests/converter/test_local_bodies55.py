"""A runtime function with a file-local native body (mindport/mappings/data/local/bodies.toml): torch.tanh,
``Tensor.tanh`` on an input floating point by the facts is the body ``_precise_tanh`` (MindSpore's own expm1/where,
against MindSpore 2.10's float32 tanh kernel, up to 1.0e-4 off for 3 < |x| < 8), written once into the converted
file under a name the file does not use; an input that may be an integer keeps ``mp_math.tanh``. The class: a
runtime guard of a kernel fault (not of torch's semantics) needs no run-time decision once the input is settled
floating, so the port need not import mindport for it. Converted modules run against torch in PyNative and
GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Additive(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(4, 4)
            self.k = nn.Linear(4, 4)
            self.bias = nn.Parameter(torch.rand(4) * 0.1)
            self.score = nn.Linear(4, 1)

        def forward(self, x, ids):
            a = torch.tanh(self.q(x) * 6 + self.k(x) + self.bias)
            b = (self.k(x) * 7).tanh()
            c = torch.tanh(ids)
            return self.score(a).squeeze(-1), b, c
""")

# the file already uses the body's name: the written one gets a fresh name; every site floating: no mindport at all
TAKEN = textwrap.dedent("""
    import torch
    import torch.nn as nn

    _precise_tanh = 3.0


    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return torch.tanh(self.fc(x) * _precise_tanh * 2) + torch.tanh(x.float() * 5)
""")


def test_a_floating_tanh_is_the_file_local_body():
    code = convert_source(SOURCE).code
    assert code.count("def _precise_tanh(input):") == 1, code
    assert "a = _precise_tanh(self.q(x) * 6 + self.k(x) + self.bias)" in code, code
    assert "b = _precise_tanh((self.k(x) * 7))" in code, code
    assert "c = mp_math.tanh(ids)" in code, code  # ids may be an integer tensor: torch computes it in float32
    assert "e = ops.expm1(ops.where(input > top, top, input) * 2)" in code, code


def test_the_body_name_is_fresh_and_the_port_imports_no_mindport():
    code = convert_source(TAKEN).code
    assert "def _precise_tanh_(input):" in code, code
    assert "return _precise_tanh_(self.fc(x) * _precise_tanh * 2) + _precise_tanh_(x.astype(ms.float32) * 5)" \
        in code, code
    assert "from mindport" not in code and "import mindport" not in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_local_body_port_matches_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ids = rng.integers(-6, 6, (2, 3)).astype(np.int64)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Additive", [x, ids], tmp_path, "additive", mode, rtol=1e-6,
                                atol=1e-6)
    taken = convert_source(TAKEN).code
    assert_port_matches_in_mode(TAKEN, taken, "Gate", [x], tmp_path, "gate", mode, rtol=1e-6, atol=1e-6)
