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


MEAN_SHIFT = textwrap.dedent('''
import torch
import torch.nn as nn


class MeanShift(nn.Conv2d):
    def __init__(self, rgb_range=1, rgb_mean=(0.4488, 0.4371, 0.4040), rgb_std=(0.5, 0.8, 1.25), sign=-1):
        super(MeanShift, self).__init__(3, 3, kernel_size=1)
        std = torch.Tensor(rgb_std)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1)
        self.weight.data.div_(std.view(3, 1, 1, 1))
        self.bias.data = sign * rgb_range * torch.Tensor(rgb_mean)
        self.bias.data.div_(std)
        self.requires_grad = False
''')


def test_in_place_update_of_a_parameter_whose_data_was_set_to_a_view(tmp_path):
    """RCAN/EDSR's MeanShift: ``.data`` set to a view of a new tensor, then divided in place. MindSpore 2.10 refuses
    an in-place Assign into a Parameter whose storage is a view ("Not support view input for inplace op Assign"):
    the Parameter takes the value as new storage, and the layer matches torch (liif/rcan failed to build)."""
    code = convert_source(MEAN_SHIFT, "mean_shift.py").code
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    assert_port_matches_in_mode(MEAN_SHIFT, code, "MeanShift", [x], tmp_path, "mean_shift", "pynative")
