"""torch.nn.Unfold put, with the einops layer after it, into a list that ``nn.Sequential(*layers)`` takes
(rules/unfold_layers.py, _extended_pairs): lucidrains' T2T-ViT builds its tokens-to-token stages with
``layers.extend([RearrangeImage() if not is_first else nn.Identity(), nn.Unfold(k, stride=s, padding=s // 2),
Rearrange('b c n -> b n c'), ...])`` in a loop, then ``self.to_patch_embedding = nn.Sequential(*layers)``. What one
extend puts in stays adjacent in the sequence, so the Unfold's output goes straight into a layer that raises on
anything but three axes, as in a Sequential display: the Unfold only meets a batch, and MindSpore's own
``ops.unfold`` gives torch's values (it was mp_nn.Unfold, whose only decision is torch's unbatched input). A list
read another way (indexed, handed on) or bound again keeps the runtime layer. Values against torch in PyNative and
GRAPH_MODE."""
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


    class Stages(nn.Module):
        def __init__(self, channels=3, dim=16, stages=((3, 2), (3, 1))):
            super().__init__()
            layers = []
            layer_dim = channels
            for i, (kernel, stride) in enumerate(stages):
                layer_dim *= kernel ** 2
                layers.extend([
                    nn.Unfold(kernel_size=kernel, stride=stride, padding=stride // 2),
                    Rearrange('b c n -> b n c'),
                    nn.Linear(layer_dim, channels),
                    Rearrange('b (h w) c -> b c h w', h=5 if i == 0 else 3),
                ])
                layer_dim = channels
            layers.append(nn.Flatten())
            self.embed = nn.Sequential(*layers)

        def forward(self, x):
            return self.embed(x)


    class Indexed(nn.Module):
        def __init__(self, dim=27):
            super().__init__()
            layers = []
            layers.extend([nn.Unfold(kernel_size=3, stride=2, padding=1), Rearrange('b c n -> b n c')])
            self.first = layers[0]
            self.embed = nn.Sequential(*layers)

        def forward(self, x):
            return self.embed(x)
""")


def test_extended_unfold_is_mindspores():
    code = convert_source(SOURCE).code
    stages = code.split("class Stages")[1].split("class Indexed")[0]
    assert "Unfold1(kernel_size=kernel, stride=stride, padding=stride // 2)" in stages, code
    assert "mp_nn.Unfold" not in stages, code
    indexed = code.split("class Indexed")[1]
    assert "mp_nn.Unfold(kernel_size=3, stride=2, padding=1)" in indexed, code  # the list is read another way


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_extended_unfold_matches_torch(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 10, 10)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Stages", [x], tmp_path, "extended_unfold", mode, atol=1e-5)
