"""``torch.nn.quantized.FloatFunctional`` (a quantization-ready model's operations kept as a module: MiDaS's
``self.skip_add = nn.quantized.FloatFunctional()`` and ``self.skip_add.add(out, x)`` in its fusion blocks) had no
mapping entry: the constructor stayed torch's (MP103), and the converted Cell called torch's ``add`` with MindSpore
tensors ("add(): argument 'input' (position 1) must be Tensor, not Tensor"). Its float methods are the plain
operations: the port matches torch in PyNative and compiled as a static graph."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Fusion(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(4, 4, 3, padding=1)
            self.skip_add = nn.quantized.FloatFunctional()
            self.more = torch.ao.nn.quantized.FloatFunctional()

        def forward(self, x, res):
            out = self.skip_add.add(self.conv(torch.relu(x)), x)
            out = self.more.add_relu(out, res)
            out = self.skip_add.mul_scalar(self.skip_add.add_scalar(out, 0.25), 3.0)
            return self.more.cat([self.skip_add.mul(out, res), out], dim=1)
""")


def test_float_functional_is_mapped():
    result = convert_source(SOURCE)
    assert not [d for d in result.diagnostics if d.code.startswith("MP1")], result.diagnostics
    assert "torch" not in result.code.replace("import torch", ""), result.code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_float_functional_matches_torch(tmp_path, mode):
    code = convert_source(SOURCE).code
    rng = np.random.default_rng(7)
    x, res = (rng.standard_normal((2, 4, 6, 5)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(SOURCE, code, "Fusion", [x, res], tmp_path, "float_functional", mode, atol=1e-5)
