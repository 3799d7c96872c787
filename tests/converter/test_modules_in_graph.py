"""``module.modules()`` in a model's forward (and in what forward calls) compiles in GRAPH_MODE (batch 8:
pytorch-generative's MADE finds its masked layers with ``[l for l in self._net.modules() if isinstance(l, ...)]``; the
wild corpus's MUNIT decoder iterates ``model.modules()``). It used to become a generator expression over
``cells_and_names()``, which a graph refuses ("Unsupported expression 'Yield'"); it is now ``module._mp_modules``, a
list of the Cells in torch's order that the graph compiler resolves by Python's attribute lookup
(``mindport.runtime.layers.Modules``, installed on ``nn.Cell``). In ``__init__`` it stays the generator. Expected
values are torch's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

MADE_LIKE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class MaskedLinear(nn.Linear):
        def __init__(self, in_features, out_features):
            super().__init__(in_features, out_features)
            self.register_buffer("mask", torch.ones(out_features, in_features))

        def set_mask(self, mask):
            self.mask.data.copy_(mask)

        def forward(self, x):
            return F.linear(x, self.weight * self.mask, self.bias)


    class Made(nn.Module):
        def __init__(self):
            super().__init__()
            self._net = nn.Sequential(MaskedLinear(4, 5), nn.ReLU(), nn.Sequential(MaskedLinear(5, 4), nn.Tanh()))
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.constant_(m.bias, 0.1)

        def _forward(self, x, masks):
            layers = [layer for layer in self._net.modules() if isinstance(layer, MaskedLinear)]
            for layer, mask in zip(layers, masks):
                layer.set_mask(mask)
            return self._net(x)

        def forward(self, x):
            masks = [torch.tril(torch.ones(5, 4)), torch.triu(torch.ones(4, 5), diagonal=1)]
            n = 0
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    n += 1
            return self._forward(x, masks) * n
""")


def test_modules_in_forward_is_a_list_of_cells():
    code = convert_source(MADE_LIKE).code
    assert "for layer in self._net._mp_modules if isinstance(layer, MaskedLinear)" in code
    assert "for m in self._mp_modules:" in code
    assert "for m in (_cell for _, _cell in self.cells_and_names()):" in code  # __init__ keeps the generator


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_modules_in_forward_matches(tmp_path, mode):
    code = convert_source(MADE_LIKE).code
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(MADE_LIKE, code, "Made", [x], tmp_path, "made_like", mode, atol=1e-5)
