"""An in-place activation on a forward parameter the method has already rebound (``x = self.bn(x)`` ... ``x =
self.relu(x)``, WideResNet's tail): the name holds the method's own tensor there, not the caller's, so MindSpore's
own ``nn.ReLU()`` does what torch's in-place one does; a parameter still holding the caller's tensor keeps the runtime
Cell. Real torch, real MindSpore."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.relu(x)
        return x


class Keep(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        if x.shape[0] > 1:
            x = x * 2
        y = self.relu(x)
        return y + x
"""


def test_inplace_activation_on_a_parameter_rebound_first_is_the_native_layer(tmp_path):
    code = convert_source(textwrap.dedent(SOURCE)).code
    net, keep = code.split("class Keep")
    assert "self.relu = nn.ReLU()" in net and "InplaceReLU" not in net  # was mp_nn.InplaceReLU()
    assert "mp_nn.InplaceReLU()" in keep  # rebound only on one path: the caller's tensor may reach the call
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(textwrap.dedent(SOURCE), code, "Net", [x], tmp_path, "rebound", "pynative",
                                rtol=1e-5, atol=1e-5)
    assert_port_matches_in_mode(textwrap.dedent(SOURCE), code, "Keep", [x], tmp_path, "keep", "pynative",
                                rtol=1e-5, atol=1e-5)
