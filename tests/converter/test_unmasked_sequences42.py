"""A layer built as ``nn.Sequential(...)``, directly or by a module-level factory of the file (``def
DynamicPositionBias(dim): return nn.Sequential(...)``), gives a softmax input with no row of all -inf when its last
member that does more than move or pass values (dropout, ``nn.Identity``, einops' ``Rearrange``) is a layer that does
(native_facts.FRESH_LAYERS, as ``self.fc(x)`` of an ``nn.Linear`` already is: UnmaskedFacts._fresh_layer).
vit-pytorch's CrossFormer adds ``self.dpb(...)``'s biases (Linear, LayerNorm, ReLU, ..., Linear, Rearrange) to its
scores: its ``sim.softmax(dim=-1)`` was mp_F.softmax. A sequence ending in a cell of the file keeps the runtime's.
The converted module runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    from einops.layers.torch import Rearrange


    def position_bias(d):
        return nn.Sequential(
            nn.Linear(2, d),
            nn.LayerNorm(d),
            nn.ReLU(),
            nn.Linear(d, 1),
            Rearrange('... () -> ...')
        )


    class Floor(nn.Module):
        def forward(self, x):
            return x.masked_fill(x < 0, float('-inf'))


    class Biased(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.qk = nn.Linear(d, 2 * d)
            self.dpb = position_bias(4)
            self.mlp = nn.Sequential(nn.Linear(2, 5), nn.Dropout(0.0))
            self.cut = nn.Sequential(nn.Linear(2, 5), Floor())

        def forward(self, x, pos):
            q, k = self.qk(x).chunk(2, dim=-1)
            sim = q @ k.transpose(-2, -1)
            bias = self.dpb(pos)
            a = (sim + bias).softmax(dim=-1)
            b = (sim + self.mlp(pos[:, 0])).softmax(dim=-1)
            c = (sim + self.cut(pos[:, 0])).softmax(dim=-1)
            return a, b, c
""")


def test_sequences_ending_in_a_layer_are_mindspores_softmax():
    code = convert_source(SOURCE).code
    assert "a = ops.softmax((sim + bias), axis=-1)" in code, code
    assert "b = ops.softmax(" in code, code
    assert "c = mp_F.softmax(" in code, code  # a cell of the file last: its rows are not known


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sequence_softmaxes_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    pos = rng.standard_normal((5, 5, 2)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Biased", [x, pos], tmp_path, "unmasked_sequences", mode,
                                rtol=1e-5, atol=1e-6)
