"""Names a model method binds on one branch of an ``if`` and reads later (``if use_cache: start = ...``) are bound
to None first, so the converted Cell compiles in GRAPH_MODE (which compiles both branches and refused it with
``UnboundLocalError ... not defined in false branch``) and still gives torch's numbers in both modes."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, use_cache=True):
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
            self.use_cache = use_cache

        def forward(self, x):
            if self.use_cache:
                start = 1
            h = self.proj(x)
            for i, layer in enumerate(self.layers):
                if i == 0:
                    e = layer(h)
                if i > 0:
                    h = layer(h) + e
            if x.shape[0] > 1:
                scale = 2.0
            else:
                scale = 3.0
            if self.use_cache:
                h = h[:, start:]
            return h * scale
""")


def test_the_binding_is_added_where_a_branch_misses_it():
    code = convert_source(SOURCE).code
    body = code.split("def construct(self, x):\n", 1)[1]
    assert body.startswith("        start = None\n        if self.use_cache:\n            start = 1\n        h = self.proj(x)\n"
                           "        e = None\n        for i, layer")
    assert "scale = None" not in code  # bound on both branches


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_compiles_and_matches_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Net", [x], tmp_path, "bb", mode)
