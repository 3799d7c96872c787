"""``q.transpose(-1, -2)`` of a receiver whose kind the converter cannot tell (``torch.stack(qs, 1) if e is not None
else None``) in a file importing numpy (UCTransNet's channel transformer, session 51): torch swaps the two axes,
numpy's transpose of a 2-D array swaps them too, so ``q.swapaxes(-1, -2)`` is the call either way. Left as written,
MindSpore's Tensor.transpose swapped in PyNative and took a permutation in GRAPH_MODE ("the number of axes must be
equal to the dimension of Tensor")."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn


    class Heads(nn.Module):
        def __init__(self, d=4, heads=2):
            super().__init__()
            self.query = nn.ModuleList([nn.Linear(d, d) for _ in range(heads)])
            self.key = nn.Linear(d, d)
            self.scale = float(np.sqrt(d))

        def forward(self, x, emb=None):
            qs = [q(x) for q in self.query]
            q = torch.stack(qs, dim=1) if emb is None else None
            q = q.transpose(-1, -2) if emb is None else None
            k = self.key(x).unsqueeze(1)
            scores = torch.matmul(k, q) / self.scale if emb is None else None
            return scores.softmax(dim=-1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_swap_of_the_last_two_axes_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "q = q.swapaxes(-1, -2) if emb is None else None" in code, code
    x = np.random.default_rng(1).standard_normal((2, 5, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Heads", [x], tmp_path, "swap_either", mode, atol=1e-6)
