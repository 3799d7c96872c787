"""A join of the outputs of a ModuleList's members, where the class builds the ModuleList empty (or of a display of
layer calls) once and fills it only by ``self.NAME.append(Layer(...))`` (native_facts.appended_module_lists), and of
``map(lambda conv: conv(x), self.convs)`` read as the comprehension ``[conv(x) for conv in self.convs]``
(FloatFacts._mapped_comprehension): every member the list can hold is one of the appended calls, so when each of
them is a torch layer of floating weights the join's members have one dtype and MindSpore's own ``ops.cat`` serves
(``mp_tensor.promoted`` before: crossformer's multi-scale ``CrossEmbedLayer``). A member whose output may be an
integer (an own class returning ``argmax``), or an append made outside the class, keeps ``mp_tensor.promoted``. The
converted modules run against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class MultiScale(nn.Module):
        def __init__(self, c=3, sizes=(1, 3, 5)):
            super().__init__()
            self.convs = nn.ModuleList([])
            for k in sizes:
                self.convs.append(nn.Conv2d(c, 4, k, padding=k // 2))

        def forward(self, x):
            fmaps = tuple(map(lambda conv: conv(x), self.convs))
            return torch.cat(fmaps, dim=1)


    class Heads(nn.Module):
        def __init__(self, d=6):
            super().__init__()
            self.heads = nn.ModuleList([nn.Linear(d, 3)])
            self.heads.append(nn.Linear(d, 5))

        def forward(self, x):
            return torch.cat([head(x) for head in self.heads], dim=-1)


    class Index(nn.Module):
        def forward(self, x):
            return x.argmax(-1, keepdim=True)


    class Mixed(nn.Module):
        def __init__(self, d=6):
            super().__init__()
            self.parts = nn.ModuleList()
            self.parts.append(nn.Linear(d, 3))
            self.parts.append(Index())

        def forward(self, x):
            return torch.cat([part(x) for part in self.parts], dim=-1)


    class Outside(nn.Module):
        def __init__(self, d=6):
            super().__init__()
            self.blocks = nn.ModuleList([])
            self.blocks.append(nn.Linear(d, 3))

        def forward(self, x):
            return torch.cat([block(x) for block in self.blocks], dim=-1)


    def grow(model, d):
        model.blocks.append(Index())
        return model
""")


def test_appended_float_layers_join_natively():
    code = convert_source(SOURCE).code
    assert "return ops.cat(fmaps, axis=1)" in code, code
    assert "return ops.cat([head(x) for head in self.heads], axis=-1)" in code, code
    assert "ops.cat(mp_tensor.promoted([part(x) for part in self.parts]), axis=-1)" in code, code
    assert "ops.cat(mp_tensor.promoted([block(x) for block in self.blocks]), axis=-1)" in code, code


@pytest.mark.parametrize("cls, shape", [("MultiScale", (2, 3, 8, 8)), ("Heads", (2, 6))])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_appended_joins_match_torch(mode, cls, shape, tmp_path):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"appended_{cls}", mode, atol=1e-5)
