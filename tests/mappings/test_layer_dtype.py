"""A layer's ``dtype`` (the call transforms ``layer_dtype`` / ``layer_dtype_float32``): torch builds
``nn.Linear(n, h, dtype=torch.float64)`` in float64; the tables dropped ``dtype`` for every layer, so the port's layer
was float32 beside torch's float64 (Orca0917/Recsys-PyTorch-Implementation's AutoRec: "For 'MatMul', the type of 'x2'
should be same as 'x1'"), silently for a model fed float32. MindSpore's Dense, LayerNorm, GroupNorm and BiDense take
``dtype`` and run float64 on the CPU; a layer whose MindSpore form has no dtype, or no float64 kernel (Conv2D and
BatchNorm refuse Float64, Embedding's dtype is its ids'), is flagged for a dtype other than float32. Numbers from
torch, in float64."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Double(nn.Module):
        def __init__(self, dtype=None):
            super().__init__()
            self.conv = nn.Linear(2, 3, dtype=torch.float64)
            self.norm = nn.LayerNorm(3, dtype=torch.float64)
            self.fc = nn.Linear(3, 4, dtype=torch.float64)
            self.plain = nn.Linear(4, 4, dtype=dtype)

        def forward(self, x):
            y = self.norm(self.conv(x.permute(0, 2, 3, 1)))
            return self.fc(y).sum(dim=(1, 2)), self.plain(torch.ones(2, 4))
""")


def test_layers_built_in_float64_are_float64_in_the_port():
    code = convert_source(SOURCE).code
    assert "dtype=ms.float64" in code or "dtype=mindspore.float64" in code, code
    assert "dtype=dtype or " in code, code  # a factory's dtype, None by default: MindSpore's layer refuses None


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_float64_model_matches_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 5))  # float64
    # MindSpore 2.10's CPU LayerNorm computes a float64 input to float32 accuracy (measured: 6e-8 from numpy's
    # float64 normalisation, where its Dense is exact): float32's tolerance, float64 values
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Double", [x], tmp_path, "double", mode,
                                rtol=1e-6, atol=1e-6)


def test_a_layer_mindspore_builds_in_float32_only_is_flagged_for_float64():
    source = "import torch\nimport torch.nn as nn\nrnn = nn.LSTM(3, 4, dtype=torch.float64)\n"
    result = convert_source(source)
    assert "MP102" in result.code and "float32 only" in result.code, result.code
    conv = convert_source("import torch\nimport torch.nn as nn\nc = nn.Conv2d(2, 3, 3, dtype=torch.float64)\n").code
    assert "MP102" in conv and "float32 only" in conv, conv
    source32 = "import torch\nimport torch.nn as nn\nrnn = nn.LSTM(3, 4, dtype=torch.float32)\n"
    assert "nn.LSTM(input_size=3, hidden_size=4)" in convert_source(source32).code
