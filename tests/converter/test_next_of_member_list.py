"""``next(self.buffers())`` (or ``named_parameters()``/``named_buffers()``) in a property ``forward`` reads
(x-transformers' ``AlibiPositionalBias.device``: ``next(self.buffers()).device``): the converter wrote the member
list GRAPH_MODE compiles, ``self._mp_buffers``, and kept ``next(...)`` around it, which a list refuses in PyNative
too ("'list' object is not an iterator"). Its first item: the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Bias(nn.Module):
        def __init__(self, n=4):
            super().__init__()
            self.register_buffer('slopes', torch.linspace(0.5, 2.0, n), persistent=False)
            self.proj = nn.Linear(n, n)

        @property
        def dtype(self):
            return next(self.buffers()).dtype

        @property
        def first_name(self):
            return next(self.named_parameters())[0]

        def forward(self, x):
            scale = 2.0 if self.first_name == 'proj.weight' else 3.0
            return self.proj(x).to(self.dtype) * self.slopes * scale
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_next_of_a_member_list_in_forward_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Bias", [x], tmp_path, "nextmember", mode, rtol=1e-5, atol=1e-6)
