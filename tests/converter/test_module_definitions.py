"""Every rule's ``leave_Module`` runs: a file that gets both an einops layer class (EinopsCallTransform) and a native
factory (``partial(nn.Linear, bias=False)`` -> ``make_linear``, TableCallTransform) keeps both definitions. Before
(integ11), the first rule's rewrite of the module stopped the second's hook: x-transformers' x_transformers.py wrote
``partial(make_linear, bias = False)`` without ``def make_linear`` and failed at import (NameError). Proven against
torch + einops in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    from functools import partial

    import torch
    import torch.nn as nn
    from einops.layers.torch import Rearrange

    LinearNoBias = partial(nn.Linear, bias=False)


    class Net(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.split = Rearrange("b n (h d) -> b h n d", h=2)
            self.proj = LinearNoBias(dim, dim)

        def forward(self, x):
            return self.split(self.proj(x))
""")


def test_both_definitions_are_written():
    code = convert_source(SOURCE).code
    assert "def make_linear(" in code and "class Rearrange1(nn.Cell)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_file_with_both_definitions_matches_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "moddefs", mode, atol=1e-6)
