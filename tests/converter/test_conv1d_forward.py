"""``self._conv_forward(x, weight, bias)`` of a Conv1d (SoundStream's ``CausalConv1d(nn.Conv1d)``, batch22 first
contact: ``return self._conv_forward(F.pad(x, [self.causal_padding, 0]), self.weight, self.bias)``; the encoder and
decoder failed loud, "_conv_forward of a CausalConv1d: only a Conv2d's converts"). A MindSpore Conv1d keeps its
settings as a Conv2d's over a height of 1 and its weight 4-D; ``mindport.runtime.layers.conv_forward`` now takes them
as the 1-D convolution's. Each form run in torch and, converted, on MindSpore."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class CausalConv1d(nn.Conv1d):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.causal_padding = self.dilation[0] * (self.kernel_size[0] - 1)

        def forward(self, x):
            return self._conv_forward(F.pad(x, [self.causal_padding, 0]), self.weight, self.bias)


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(
                CausalConv1d(in_channels=2, out_channels=4, kernel_size=7),
                nn.ELU(),
                CausalConv1d(in_channels=4, out_channels=8, kernel_size=3, dilation=3, groups=2),
                nn.ELU(),
                CausalConv1d(in_channels=8, out_channels=6, kernel_size=4, stride=2, padding=1, bias=False),
            )

        def forward(self, x):
            return self.layers(x)


    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(3, 5, 3, padding=2, dilation=2)
            self.gain = nn.Parameter(torch.tensor(0.75))

        def forward(self, x):
            return self.conv._conv_forward(x, self.conv.weight * self.gain, None)
""")

SHAPES = {"Encoder": (2, 2, 19), "Scaled": (2, 3, 11)}


@pytest.mark.parametrize("cls", sorted(SHAPES))
def test_a_conv1d_forward_with_its_own_settings_matches(tmp_path, cls):
    code = convert_source(SOURCE).code
    assert "mp_nn.conv_forward(" in code, code
    x = np.random.default_rng(0).standard_normal(SHAPES[cls]).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"conv1dfw_{cls}", "pynative", atol=1e-5)
