"""A numpy value on the left of a tensor (whisper's ``sinusoids``: ``-np.log(10000) / (d - 1) * torch.arange(n)``):
numpy's operator runs first and gives an ndarray with a MindSpore tensor (torch defers to its tensor). The converter
writes ``ops.mul(a, t)``; the port gives torch's values and dtype, in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn


    def sinusoids(length, channels, max_timescale=10000):
        log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
        inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
        scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
        return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer('positions', sinusoids(5, 8))
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            return self.proj(x + self.positions), np.float32(0.5) + x.sum(-1)
""")


def test_numpy_on_the_left_is_an_ops_call():
    code = convert_source(SOURCE).code
    assert "ops.exp(ops.mul(-log_timescale_increment, ops.arange(start=channels // 2)))" in code  # a float product: native
    assert "ops.add(np.float32(0.5), mp_math.sum(x, dim=-1))" in code
    assert "log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)" in code  # numpy stays numpy


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Net", [x], tmp_path, "npleft", mode,
                                atol=1e-5)


def test_converted_code_converts_to_itself():
    """A MindSpore call's result is "foreign" to the converter as numpy's is: converting the output again must not
    read ``x = ops.relu(x); x + self.fc(x)`` as numpy on the left (idempotence found it)."""
    first = convert_source(SOURCE).code
    assert convert_source(first).code == first


ANCHORS = textwrap.dedent("""\
    import itertools

    import numpy as np
    import torch
    import torch.nn as nn


    class Anchors(nn.Module):
        def __init__(self, anchor_scale=4.0):
            super().__init__()
            self.anchor_scale = anchor_scale
            self.strides = [8, 16]
            self.ratios = [(1.0, 1.0), (1.4, 0.7)]

        def forward(self, image):
            boxes = []
            for stride in self.strides:
                for scale, ratio in itertools.product([1.0, 2.0], self.ratios):
                    size = self.anchor_scale * stride * scale * ratio[1] / 2.0
                    x = np.arange(stride / 2, image.shape[-1], stride)
                    xv, yv = np.meshgrid(x, x)
                    boxes.append((yv.reshape(-1) - size).astype(np.float32))
            return torch.from_numpy(np.concatenate(boxes)) + image.sum() * 0
    """)


def test_a_number_kept_on_self_is_no_tensor_beside_numpy(tmp_path):
    """EfficientDet's anchors (batch 7, effdet/d0): ``self.anchor_scale = anchor_scale`` (a constructor's parameter)
    times loop numbers is a Python number; ``yv - size`` with ``yv`` numpy's is numpy's operator (it became
    ``ops.sub(yv, size)``: "Failed calling Sub with input=numpy.ndarray")."""
    import mindspore as ms
    import torch

    from port_check import load_module

    code = convert_source(ANCHORS).code
    assert "ops.sub(" not in code, code
    image = np.zeros((1, 3, 32, 32), np.float32)
    want = load_module(ANCHORS, tmp_path / "t_anchors.py", "t_anchors").Anchors()(torch.from_numpy(image)).numpy()
    got = load_module(code, tmp_path / "m_anchors.py", "m_anchors").Anchors()(ms.Tensor(image)).asnumpy()
    np.testing.assert_allclose(got, want)
