"""``del`` of local names in forward (batch 6 GMAN frees its attention tensors): GRAPH_MODE has no ``del`` statement;
the converter drops it (LocalDelTransform) and the port matches torch in PyNative and compiled. ``del`` of an item or
an attribute is left."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(4, 4)
            self.k = nn.Linear(4, 4)

        def forward(self, x):
            query, key = self.q(x), self.k(x)
            attention = torch.softmax(query @ key.transpose(-1, -2), dim=-1)
            out = attention @ x
            del query, key, attention
            for _ in range(2):
                scaled = out * 0.5
                out = out + scaled
                if out.shape[0] > 4:
                    del scaled
            return out
""")


def test_local_dels_dropped():
    code = convert_source(SOURCE).code
    assert "del " not in code and "                pass" in code


def test_item_and_attribute_dels_left():
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x, d):
                del d["k"]
                del self.cache
                return x
    """)
    code = convert_source(source).code
    assert 'del d["k"]' in code and "del self.cache" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_local_dels_match(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Attention", [x], tmp_path, "dels", mode, atol=1e-5)
