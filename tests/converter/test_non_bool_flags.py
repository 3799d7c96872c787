"""A layer's ``bias`` given something that is not a bool (batch 8's DBPN: ``DeconvBlock(num_filter, num_filter,
kernel_size, stride, padding, activation, norm=None)`` puts 'prelu', the sixth positional argument, in ``bias``):
torch only tests ``if bias:``, MindSpore's ``has_bias`` must be a bool ("For 'Conv2dTranspose', the 'has_bias' must
be a bool, but got str"). Where some call of the file passes a string or a number (or a parameter whose default is
one) to the parameter handed on as ``bias``, it is written ``has_bias=bool(bias)``; elsewhere ``has_bias=bias``."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class DeconvBlock(nn.Module):
        def __init__(self, input_size, output_size, kernel_size=4, stride=2, padding=1, bias=True, activation='prelu'):
            super().__init__()
            self.deconv = nn.ConvTranspose2d(input_size, output_size, kernel_size, stride, padding, bias=bias)
            self.act = nn.PReLU()

        def forward(self, x):
            return self.act(self.deconv(x))


    class Plain(nn.Module):
        def __init__(self, bias=True):
            super().__init__()
            self.fc = nn.Linear(4, 4, bias=bias)

        def forward(self, x):
            return self.fc(x)


    class UpBlock(nn.Module):
        def __init__(self, num_filter=3, kernel_size=4, stride=2, padding=1, bias=True, activation='prelu'):
            super().__init__()
            self.up = DeconvBlock(num_filter, num_filter, kernel_size, stride, padding, activation)
            self.off = DeconvBlock(num_filter, num_filter, kernel_size, stride, padding, False)
            self.plain = Plain(bias=False)

        def forward(self, x):
            return self.up(x) + self.off(x)
""")


def test_a_string_landing_in_bias_is_its_truth(tmp_path):
    code = convert_source(SOURCE).code
    assert "has_bias=bool(bias)" in code, code  # DeconvBlock: a call passes 'prelu' there
    assert "out_channels=4, has_bias=bias" in code, code  # Plain: only bools reach it
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOURCE, code, "UpBlock", [x], tmp_path, f"nonbool_{mode}", mode)


OWN_DEFAULT = textwrap.dedent("""\
    import torch.nn as nn


    class ConvCell(nn.Module):
        def __init__(self, c=3, hidden=4, bias=1):
            super().__init__()
            self.bias = bias
            self.conv = nn.Conv2d(c, hidden, 3, padding=1, bias=self.bias)
            self.fc = nn.Linear(hidden, 2, bias=bias)

        def forward(self, x):
            return self.fc(self.conv(x).mean((2, 3)))
""")


def test_a_number_a_parameter_defaults_to_stored_on_self_then_given_as_bias(tmp_path):
    """PhyDNet's ``def __init__(..., bias=1)``: ``self.bias = bias``, then ``nn.Conv2d(..., bias=self.bias)``
    ("For 'Conv2d', the 'has_bias' must be a bool, but got int")."""
    code = convert_source(OWN_DEFAULT).code
    assert "has_bias=bool(self.bias)" in code and "has_bias=bool(bias)" in code, code
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(OWN_DEFAULT, code, "ConvCell", [x], tmp_path, f"own_default_{mode}", mode)
