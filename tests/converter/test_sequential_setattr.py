"""A layer set on an ``nn.Sequential`` by attribute runs in it (FLUX's ``replace_linear_with_lora``, batch22 first
contact: SILENT, max rel 0.087). torch's Sequential runs ``self._modules.values()``, so a child swapped by
``setattr(module, name, new)`` while walking ``named_children()`` runs from then on; MindSpore's SequentialCell runs
``cell_list``, built once, and ``Cell.__setattr__`` left it alone: the new layer's weights were listed and filled while
the old layer ran. ``mindport.runtime.sequential_members`` (loaded with the runtime) refreshes the run list. Each form
run in torch and, converted, on MindSpore (PyNative and GRAPH_MODE)."""
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


    class LoraLinear(nn.Linear):
        def __init__(self, in_features, out_features, bias, rank=2):
            super().__init__(in_features=in_features, out_features=out_features, bias=bias)
            self.lora_A = nn.Linear(in_features, rank, bias=False)
            self.lora_B = nn.Linear(rank, out_features, bias=False)
            nn.init.normal_(self.lora_B.weight, std=0.5)

        def forward(self, x):
            return super().forward(x) + self.lora_B(self.lora_A(x))


    def inject(module):
        for name, child in module.named_children():
            if isinstance(child, nn.Linear):
                new = LoraLinear(child.in_features, child.out_features, child.bias is not None)
                new.weight = child.weight
                new.bias = child.bias
                setattr(module, name, new)
            else:
                inject(child)


    class Swapped(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
            self.head = nn.Sequential(nn.SiLU(), nn.Linear(dim, 3))
            inject(self)

        def forward(self, x):
            return self.head(x + self.mlp(x))


    class Added(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())
            self.body.out = nn.Linear(dim, 4)
            setattr(self.body, "1", nn.Sigmoid())

        def forward(self, x):
            return self.body(x)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls", ["Swapped", "Added"])
def test_a_layer_set_on_a_sequential_by_attribute_runs(tmp_path, cls, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, cls, [x], tmp_path, f"seqattr_{cls}", mode, atol=1e-5)
