"""A bias given to or taken from a Linear or a convolution after construction (insight88/NLP-Models-PyTorch's BERT
prediction head, first contact: ``self.decoder = Linear(h, vocab, bias=False)`` then ``self.decoder.bias =
nn.Parameter(torch.zeros(vocab))``). torch's forward reads ``self.bias`` on every call; MindSpore's Dense and
convolutions add it only when ``has_bias`` was set in ``__init__``: the written bias was never added (the validator
said "bias differs"), and ``m.bias = None`` on a layer built with one failed in BiasAdd. LayerWriteTransform sends
the write through ``mp_adapt.set_layer_attribute``, which switches ``has_bias`` with it. Expected values come from
torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def Linear(i_dim, o_dim, bias=True):
        m = nn.Linear(i_dim, o_dim, bias)
        nn.init.normal_(m.weight, std=0.5)
        return m


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = nn.Linear(8, 8)
            self.decoder = Linear(8, 12, bias=False)
            self.decoder.bias = nn.Parameter(torch.linspace(-1, 1, 12))
            self.direct = nn.Linear(8, 12, bias=False)
            self.direct.bias = nn.Parameter(torch.linspace(1, 2, 12))
            self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
            self.conv.bias = nn.Parameter(torch.linspace(0.5, 2, 4))
            self.conv2 = nn.Conv2d(3, 4, 1)
            self.conv2.bias = None
            self.up = nn.ConvTranspose2d(4, 2, 2, stride=2, bias=False)
            for m in [self.up]:
                m.bias = nn.Parameter(torch.full((2,), 0.75))

        def forward(self, x, img):
            h = torch.tanh(self.dense(x))
            return self.decoder(h) + self.direct(h), self.up(self.conv(img) + self.conv2(img))
""")


def test_bias_writes_go_through_the_accessor():
    code = convert_source(SOURCE).code
    for layer in ("self.decoder", "self.direct", "self.conv", "self.conv2", "m"):
        assert f"mp_adapt.set_layer_attribute({layer}, 'bias', " in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_bias_written_after_construction_is_added_as_torch_adds_it(tmp_path, mode):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 8)).astype(np.float32), rng.standard_normal((2, 3, 6, 6)).astype(np.float32)]
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Head", inputs, tmp_path, "bias_writes", mode,
                                atol=1e-5)
