"""Issue 30 (native ports): ``F.interpolate`` / ``F.upsample`` given a ``size`` (no ``scale_factor``), a literal
mode of nearest, linear, bilinear or trilinear (or torch's default) and no antialias is MindSpore's own
``ops.interpolate`` with the same arguments: the runtime's interpolate calls exactly that there, and MindSpore's
sampling is torch's (nearest exactly, the linear modes to float32 rounding: measured below against torch, PyNative and
GRAPH_MODE, downsizing, upsizing, align_corners, 1-d, 2-d and 3-d); a size holding a call other than int()/len() (a
NumPy integer or a tensor, which ops.interpolate refuses) keeps the runtime's. So is one given a literal integral
scale_factor (``2``, ``2.0``, ``(2, 3)``), written as floats with ``recompute_scale_factor=True`` (MindSpore refuses
an integer scale factor; sampled at n / (n * s), torch's 1 / s), and ``nn.Upsample`` likewise is MindSpore's
``nn.Upsample``. A non-integral scale_factor, bicubic, antialias or a mode not written as a literal keeps the
runtime's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

SOURCE = HEAD + textwrap.dedent("""
    class Resize2d(nn.Module):
        def __init__(self, size=(5, 11), mode="bilinear"):
            super().__init__()
            self.size = size
            self.mode = mode

        def forward(self, x):
            h, w = x.shape[-2:]
            a = F.interpolate(x, size=(h // 2, w // 2), mode='bilinear')
            b = F.interpolate(x, size=(h * 2 + 1, w + 3), mode="bilinear", align_corners=True)
            c = F.interpolate(x, size=(h * 2, w * 2))
            d = F.interpolate(x, (7, 5), None, "nearest")
            e = F.upsample(x, size=9, mode="bilinear", align_corners=False)
            kept = F.interpolate(x, scale_factor=2.5, mode="nearest")
            cubic = F.interpolate(x, size=(5, 7), mode="bicubic")
            smooth = F.interpolate(x, size=(3, 4), mode="bilinear", antialias=True)
            chosen = F.interpolate(x, size=self.size, mode=self.mode)
            counted = F.interpolate(x, size=(int(torch.tensor(h) * 2), w.__index__()), mode="nearest")
            return a, b, c, d, e, kept, cubic, smooth, chosen, counted


    class Scaled2d(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Upsample(scale_factor=2, mode='nearest')
            self.up_sized = nn.Upsample(size=(5, 7), mode='bilinear', align_corners=True)
            self.up_kept = nn.Upsample(scale_factor=1.5, mode='bilinear')

        def forward(self, x):
            a = F.interpolate(x, scale_factor=2.0, mode="nearest")
            b = F.interpolate(x, scale_factor=(2, 3), mode="bilinear")
            c = F.interpolate(x, scale_factor=3, mode="bilinear", align_corners=True)
            kept = F.interpolate(x, scale_factor=1.5, mode="bilinear")
            return a, b, c, kept, self.up(x), self.up_sized(x), self.up_kept(x)


    class Resize3d(nn.Module):
        def forward(self, x):
            a = F.interpolate(x, size=(x.shape[2], x.shape[3] * 2, x.shape[4] * 2), mode="nearest")
            b = F.interpolate(x, size=(4, 6, 7), mode="trilinear")
            c = F.interpolate(x, scale_factor=2, mode="trilinear")
            return a, b, c


    class Resize1d(nn.Module):
        def forward(self, x):
            a = F.interpolate(x, size=11, mode="linear")
            b = F.interpolate(x, size=5)
            return a, b
""")


def test_sized_interpolates_are_native():
    code = convert_source(SOURCE).code
    for line in ("a = ops.interpolate(x, size=(h // 2, w // 2), mode='bilinear')",
                 'b = ops.interpolate(x, size=(h * 2 + 1, w + 3), mode="bilinear", align_corners=True)',
                 "c = ops.interpolate(x, size=(h * 2, w * 2))",
                 'd = ops.interpolate(x, size=(7, 5), mode="nearest")',
                 'e = ops.interpolate(x, size=9, mode="bilinear", align_corners=False)',
                 'a = ops.interpolate(x, size=(x.shape[2], x.shape[3] * 2, x.shape[4] * 2), mode="nearest")',
                 'b = ops.interpolate(x, size=(4, 6, 7), mode="trilinear")',
                 'a = ops.interpolate(x, size=11, mode="linear")', "b = ops.interpolate(x, size=5)",
                 'a = ops.interpolate(x, scale_factor=2.0, mode="nearest", recompute_scale_factor=True)',
                 'b = ops.interpolate(x, scale_factor=(2.0, 3.0), mode="bilinear", recompute_scale_factor=True)',
                 'c = ops.interpolate(x, scale_factor=3.0, mode="bilinear", align_corners=True, '
                 'recompute_scale_factor=True)',
                 'c = ops.interpolate(x, scale_factor=2.0, mode="trilinear", recompute_scale_factor=True)',
                 "self.up = nn.Upsample(scale_factor=2.0, mode='nearest', recompute_scale_factor=True)",
                 "self.up_sized = nn.Upsample(size=(5, 7), mode='bilinear', align_corners=True)",
                 "self.up_kept = mp_nn.Upsample(scale_factor=1.5, mode='bilinear')",
                 'kept = mp_F.interpolate(x, scale_factor=1.5, mode="bilinear")',
                 'kept = mp_F.interpolate(x, scale_factor=2.5, mode="nearest")',
                 'cubic = mp_F.interpolate(x, size=(5, 7), mode="bicubic")',
                 'smooth = mp_F.interpolate(x, size=(3, 4), mode="bilinear", antialias=True)',
                 "chosen = mp_F.interpolate(x, size=self.size, mode=self.mode)",
                 "counted = mp_F.interpolate("):
        assert line in code, (line, code)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls, shape", [("Resize2d", (2, 3, 6, 8)), ("Scaled2d", (2, 3, 6, 8)),
                                        ("Resize3d", (1, 2, 3, 4, 5)),
                                        ("Resize1d", (2, 3, 7))])
def test_sized_interpolates_match_torch(cls, shape, mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"interp_{cls}", mode, rtol=1e-5, atol=2e-6)
