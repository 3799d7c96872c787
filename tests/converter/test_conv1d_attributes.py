"""A 1-D convolution's settings read back (EnCodec's SConv1d/SConvTranspose1d compute causal and asymmetric padding
from ``conv.kernel_size[0]``, ``conv.stride[0]``, ``conv.dilation[0]``): MindSpore runs Conv1d and Conv1dTranspose
as 2-D convolutions and keeps these as (1, k), so ``kernel_size[0]`` read 1 and the padded lengths went wrong. The
runtime classes read them back as torch's 1-tuples; the ports match torch, through a helper's ``*args`` (the runtime
adapter) and written out, in PyNative and compiled."""
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


    def make(cls, *args, **kwargs):
        return cls(*args, **kwargs)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = make(nn.Conv1d, 2, 4, 5, stride=2, dilation=1)
            self.tr = nn.ConvTranspose1d(4, 3, 4, stride=2, padding=1)
            self.same = nn.Conv1d(3, 3, 3, dilation=2, padding=2)

        def forward(self, x):
            k = (self.conv.kernel_size[0] - 1) * self.conv.dilation[0] + 1
            total = k - self.conv.stride[0]
            x = self.conv(F.pad(x, (total, 0)))
            y = self.tr(x)
            trim = self.tr.kernel_size[0] - self.tr.stride[0] - 2 * self.tr.padding[0]
            y = y[..., :y.shape[-1] - trim]
            return self.same(y) * self.same.padding[0] + self.same.kernel_size[0]
""")


def test_settings_read_as_torch_tuples():
    import torch

    from mindport.runtime import layers as mp_nn

    for kw in ({}, {"stride": 3, "dilation": 2, "padding": 4}):
        t, m = torch.nn.Conv1d(2, 3, 5, **kw), mp_nn.Conv1d(2, 3, 5, **kw, pad_mode="pad")
        t_tr, m_tr = torch.nn.ConvTranspose1d(2, 3, 5, **kw), mp_nn.Conv1dTranspose(2, 3, 5, **kw, pad_mode="pad")
        for name in ("kernel_size", "stride", "dilation", "padding"):
            assert getattr(m, name) == getattr(t, name) and getattr(m_tr, name) == getattr(t_tr, name), name


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_padding_computed_from_the_settings_matches(tmp_path, mode):
    result = convert_source(SOURCE)
    # self.conv is built by a class passed in (make(nn.Conv1d, ...)): its kernel_size/stride/padding read in forward
    # carry the shadowed-members warning (on a MaxPool1d they would read MindSpore's value); nothing else
    assert all(d.severity == "warning" and d.code == "MP104" for d in result.diagnostics), \
        [d.format() for d in result.diagnostics]
    assert "mp_nn.Conv1dTranspose(" in result.code and "mp_nn.Conv1d(" in result.code
    x = np.random.default_rng(0).standard_normal((2, 2, 16)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "conv1dattr", mode, atol=1e-5)
