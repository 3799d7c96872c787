"""MindSpore 2.10's CPU LRN kernel fails from 8 channels on ("RuntimeError: Unknown Error!" in PyNative, "could not
execute a primitive" in GRAPH_MODE: AlexNet's 2x96x55x55, Keith-Dao/PyTorch-Models' AlexNet and GoogLeNet on first
contact) while 2x6x3x3 runs: torch.nn.LocalResponseNorm is converted to mindport.runtime.layers.LocalResponseNorm,
torch's formula written out (an even window too, which mindspore.nn.LRN cannot have). This differential test runs
the converted layer over window sizes, channel counts and ranks against torch, in PyNative and GRAPH_MODE."""
from __future__ import annotations

import numpy as np
import pytest

from test_snippet_fixes import run_both


@pytest.mark.parametrize("size", [1, 2, 4, 5])
@pytest.mark.parametrize("shape", [(2, 16, 3, 3), (1, 8, 1, 1), (2, 96, 13, 13), (2, 9, 7), (1, 12, 2, 3, 4)])
def test_local_response_norm_matches_torch(size, shape):
    program = (
        "import numpy as np\nimport torch\nimport torch.nn as nn\n"
        f"x = torch.from_numpy(np.random.default_rng(0).standard_normal({shape}).astype(np.float32) * 3)\n"
        f"y = nn.LocalResponseNorm({size}, alpha=1e-3, beta=0.75, k=2.0)(x)\n"
    )
    t_space, m_space, result = run_both(program, ["y"], rtol=1e-5, atol=1e-6)
    assert "LocalResponseNorm(" in result.code and "LRN" not in result.code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_local_response_norm_in_a_model(tmp_path, mode):
    from mindport import convert_source
    from tests.converter.port_check import assert_port_matches_in_mode

    source = (
        "import torch.nn as nn\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 96, 3)\n"
        "        self.lrn = nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=2.0)\n\n"
        "    def forward(self, x):\n"
        "        return self.lrn(self.conv(x).relu() * 40)\n"
    )
    code = convert_source(source, "lrn35.py").code
    x = np.random.default_rng(3).standard_normal((2, 3, 12, 12)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, "lrn35", mode, rtol=1e-5, atol=1e-5)
