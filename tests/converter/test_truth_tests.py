"""``a ^ b`` tested for truth (rules/truth_tests.py): ``a != b``, which MindSpore's static graph compiles where its
BitXor refuses two bools (x-transformers' ``assert not (self.cross_attend ^ exists(context))``)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def exists(v):
        return v is not None


    class Net(nn.Module):
        def __init__(self, cross_attend=False):
            super().__init__()
            self.cross_attend = cross_attend
            self.fc = nn.Linear(4, 4)

        def forward(self, x, context=None):
            assert not (self.cross_attend ^ exists(context)), 'context must be passed in if cross_attend is set'
            if (x.shape[0] > 1) ^ self.cross_attend and not (3 ^ 3):
                x = x + 1
            return self.fc(x)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_xor_tested_for_truth_compiles_and_matches(mode, tmp_path):
    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    assert "^" not in result.code and "assert not (self.cross_attend != exists(context))" in result.code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "xor", mode, rtol=1e-5, atol=1e-6)
