"""A ``functools.partial`` held on a model and called in forward (batch 7 PackNet's PackLayerConv3d: ``self.pack =
partial(packing, r=r)``): GRAPH_MODE runs the partial as Python and the next layer fails to compile; the converter
writes it as a stored lambda (PartialAttributeTransform) and the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    from functools import partial

    import torch.nn as nn


    def packing(x, r=2):
        b, c, h, w = x.shape
        x = x.contiguous().view(b, c, h // r, r, w // r, r)
        return x.permute(0, 1, 3, 5, 2, 4).contiguous().view(b, c * r * r, h // r, w // r)


    class PackConv3d(nn.Module):
        def __init__(self, r=2, d=2):
            super().__init__()
            self.pack = partial(packing, r=r)
            self.pad = nn.ConstantPad2d(padding=(1,) * 4, value=0)
            self.conv = nn.Conv2d(3 * r * r * d, 3, 3)
            self.conv3d = nn.Conv3d(1, d, kernel_size=(3, 3, 3), padding=1)

        def forward(self, x):
            x = self.pack(x)
            x = self.conv3d(x.unsqueeze(1))
            b, c, d, h, w = x.shape
            return self.conv(self.pad(x.view(b, c * d, h, w)))
""")


def test_partial_attribute_is_a_lambda():
    code = convert_source(SOURCE).code
    assert "self.pack = lambda *args: packing(*args, r=r)" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_partial_attribute_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "PackConv3d", [x], tmp_path, "packconv", mode, atol=1e-5)
