"""``map(lambda t: ..., xs)`` in model methods (``q, k, v = map(lambda t: ..., (q, k, v))``, ``sum(map(lambda fn:
fn(x), self.fns))``) becomes a list comprehension: GRAPH_MODE refused the lambda reading a name of the method
("The Map operator don't support Closure with free variable"); the port matches torch in both modes."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def mix(q, k, w):
        q, k = map(lambda t: t * w, (q, k))
        qa, ka = map(lambda t: t.chunk(2, dim=-1)[0], (q, k))
        return q - k + (qa * ka).sum()


    def double(t):
        return t * 2


    class Net(nn.Module):
        def __init__(self, heads=2):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(8, 24)
            self.fns = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])

        def forward(self, x):
            h = self.heads
            q, k, v = map(lambda t: t.reshape(t.shape[0], h, -1), self.qkv(x).chunk(3, dim=-1))
            mixed = sum(map(lambda fn: fn(x), self.fns))
            pairs = torch.stack(list(map(lambda a, b: a * b, (q, k), (k, v))))
            twice = torch.cat(list(map(double, (q, k))), dim=-1)
            kept = map(lambda t: t * 2, (q, k))  # kept for later: left as written
            return mixed, pairs, mix(q, k, 0.5) + twice.sum(), sum(kept)
""")


def test_maps_consumed_at_once_become_list_comprehensions():
    code = convert_source(SOURCE).code
    assert "q, k, v = [t.reshape(t.shape[0], h, -1) for t in self.qkv(x).chunk(3, -1)]" in code
    assert "sum([fn(x) for fn in self.fns])" in code
    assert "list([a * b for a, b in zip((q, k), (k, v))])" in code
    assert "kept = map(lambda t: t * 2, (q, k))" in code
    assert "q, k = [t * w for t in (q, k)]" in code  # a helper function the model calls is compiled too
    assert "qa, ka = [t.chunk(2, -1)[0] for t in (q, k)]" in code  # t: each of the tensors q, k
    assert "list([double(_mp_item) for _mp_item in (q, k)])" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches_torch(tmp_path, mode):
    source = SOURCE.replace("            kept = map(lambda t: t * 2, (q, k))  # kept for later: left as written\n",
                            "").replace(", sum(kept)", "")
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    assert_port_matches_in_mode(source, convert_source(source).code, "Net", [x], tmp_path, "ml", mode, atol=1e-5)
