"""BatchNorm with ``track_running_stats=False`` (batch statistics in eval too; graph nets, GAN discriminators,
TSP-GCN's residual gated GCN) was refused (MP102) and kept torch, so the port held a torch module MindSpore could not
load weights into. It is MindSpore's ``use_batch_statistics=True`` (batch statistics in both modes); a flag known
only at run time is ``None if flag else True``. Compared with torch in eval, PyNative and GRAPH_MODE, the torch
weights moved by name."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, flag=False):
            super().__init__()
            self.conv = nn.Conv2d(3, 6, 3)
            self.bn = nn.BatchNorm2d(6, track_running_stats=False)
            self.bn1 = nn.BatchNorm1d(6, track_running_stats=flag)
            self.bn3 = nn.BatchNorm3d(2, track_running_stats=False, affine=False)
            with torch.no_grad():
                self.bn.weight.normal_()
                self.bn.bias.normal_()
                self.bn1.weight.normal_()

        def forward(self, x):
            y = self.bn(self.conv(x))
            z = self.bn1(y.flatten(2))
            w = self.bn3(y.reshape(y.shape[0], 2, 3, y.shape[2], y.shape[3]))
            return z.sum(-1) + w.sum((2, 3, 4)).repeat(1, 3)
""")


def test_converts_without_a_flag():
    result = convert_source(SOURCE)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "nn.BatchNorm2d(num_features=6, use_batch_statistics=True" in result.code
    assert "use_batch_statistics=None if flag else True" in result.code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_batch_statistics_in_eval_match_torch(tmp_path, mode):
    x = (np.random.default_rng(0).standard_normal((4, 3, 7, 7)) * 2 + 1).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Net", [x], tmp_path, "bn_batch_stats", mode,
                                atol=2e-5)
