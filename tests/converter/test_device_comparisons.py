"""Issue 30: two tensors' devices compared (sooftware conformer's ``self.pe.device != x.device``, nanochat's
``assert idx.device == self.cos.device``) are one device in MindSpore (placement is global): the comparison is
``False`` / ``True`` (DeviceTransform.leave_Comparison), no ``mp_tensor.device`` read. Before: both sides went
through ``mp_tensor.device``, which gave that same constant at run time. Proven against torch in PyNative and
GRAPH_MODE; a comparison with a non-tensor side keeps the runtime read."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, d=4, n=16):
            super().__init__()
            self.register_buffer("pe", torch.arange(n * d, dtype=torch.float32).reshape(1, n, d) / 100)

        def forward(self, x):
            if self.pe.device != x.device:
                x = x * 2
            same = x.device == self.pe.device
            assert same
            return x + self.pe[:, :x.shape[1]] * (2 if same else 3)
""")


def test_device_comparisons_are_constants():
    code = convert_source(SOURCE).code
    assert "mindport" not in code, code
    assert "if False:" in code and "same = True" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_device_comparisons_match_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "devcmp", mode, atol=1e-6)


def test_a_comparison_with_a_string_keeps_the_runtime_read():
    source = SOURCE.replace("same = x.device == self.pe.device", "same = str(x.device) == 'cpu'")
    code = convert_source(source).code
    assert "mp_tensor.device(x)" in code, code
