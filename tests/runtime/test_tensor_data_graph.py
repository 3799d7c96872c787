"""``t.data`` in a module-level helper that ``forward`` calls (video-classification-3d-cnn's type-A shortcut:
``torch.cat([out.data, zero_pads], dim=1)``): the converter writes ``mp_adapt.tensor_data(out)``, which imported
MindSpore inside the function, and a static graph refused the statement ("Unsupported statement 'Import'"). The port
matches torch in PyNative and compiled."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mindport import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "converter"))
from port_check import assert_port_matches_in_mode  # noqa: E402

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def widen(x, planes):
        out = F.avg_pool1d(x, kernel_size=1, stride=2)
        pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2))
        return torch.cat([out.data, pads], dim=1)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(3, 6, 1, stride=2)

        def forward(self, x):
            return self.conv(x) + widen(x, 6)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_data_in_a_helper_called_by_forward_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "mp_adapt.tensor_data(out)" in code
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "tdata", mode, rtol=1e-5, atol=1e-6)
