"""``zip(..., strict=...)`` in a model method (rules/zip_strict.py): MindSpore's static graph has no ``strict``
keyword ("Got an unexpected keyword argument 'strict'": wolny/pytorch-3dunet's UNet2D walks
``zip(self.decoders, encoders_features, strict=False)``). Expected values come from torch; the fixture is written
here."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoders = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
            self.decoders = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

        def forward(self, x):
            features = []
            for encoder in self.encoders:
                x = torch.tanh(encoder(x))
                features.insert(0, x)
            for decoder, skip in zip(self.decoders, features[1:], strict=False):
                x = decoder(x) + skip
            for decoder, skip in zip(self.decoders, features, strict=False):  # stops at the shorter
                x = x * 0.5 + decoder(skip)
            for decoder, skip in zip(self.decoders, features[:2], strict=True):
                x = decoder(x) - skip
            return x
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_zip_strict_compiles_and_matches(mode, tmp_path):
    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    assert "strict=" not in result.code and "mp_graph_safe.zip_strict(self.decoders, features[:2])" in result.code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "zip_strict", mode, rtol=1e-5, atol=1e-6)


def test_zip_strict_checks_lengths():
    """The helper keeps strict=True's error: in PyNative (Python's zip) and in a graph (its own check)."""
    import mindspore as ms
    from mindspore import nn

    from mindport.runtime import graph_safe

    with pytest.raises(ValueError):
        list(graph_safe.zip_strict([1, 2], [1]))

    class Pairs(nn.Cell):
        def construct(self, x):
            out = x
            for a, b in graph_safe.zip_strict((x, x), (x,)):
                out = out + a * b
            return out

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(ValueError):
            Pairs()(ms.Tensor(np.ones((2,), np.float32)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
