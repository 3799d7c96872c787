"""torch's other convolution padding modes (Informer's TokenEmbedding: ``nn.Conv1d(..., padding=1,
padding_mode='circular')``). MindSpore's convolutions only zero-pad, so the call was flagged and kept as torch's
Conv1d: the Cell held a torch module and the weights did not line up. A literal 'reflect', 'replicate' or 'circular'
now goes to ``mindport.runtime.layers.ModePadded*`` (pad in the mode, convolve unpadded, as torch's _conv_forward),
a mode known only at run time through the runtime adapter; the ports match torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, mode="reflect"):
            super().__init__()
            self.token = nn.Conv1d(in_channels=3, out_channels=4, kernel_size=3, padding=1, padding_mode='circular')
            self.rep = nn.Conv2d(4, 5, 3, padding=(1, 2), padding_mode="replicate")
            self.run_time = nn.Conv2d(5, 2, 3, padding=1, padding_mode=mode)

        def forward(self, x):
            y = self.token(x.permute(0, 2, 1))[:, :, None, :].repeat(1, 1, 3, 1)
            return self.run_time(self.rep(y)) * self.token.padding[0]
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_padding_modes_match_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    assert "torch" not in code.replace("torch.nn.Conv2d's parameters", "")  # the factory's docstring
    assert "self.run_time = make_conv2d(5, 2, 3, padding=1, padding_mode=mode)" in code  # the mode decides the class
    assert "ModePaddedConv1d" in code and "ModePaddedConv2d" in code
    x = np.random.default_rng(0).standard_normal((2, 7, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "padding_modes", mode)


def test_same_padding_with_a_mode_is_flagged():
    result = convert_source("import torch.nn as nn\nconv = nn.Conv1d(2, 2, 3, padding='same', padding_mode='reflect')\n")
    assert [d.code for d in result.diagnostics] == ["MP102"]
    assert "give the padding as numbers" in result.diagnostics[0].message
