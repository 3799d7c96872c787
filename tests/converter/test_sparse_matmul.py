"""A sparse matrix times a dense one (GAE's GraphConvolution: ``torch.spmm(adj, support)``; ``torch.sparse.mm``).
torch.spmm had no entry: the line kept torch and failed on MindSpore tensors. A port keeps sparse tensors dense
(``to_sparse`` keeps the values), so both are the dense mm; the port matches torch with the adjacency made sparse by
``to_sparse()``, in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class GraphConvolution(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(6, 4))

        def forward(self, x, adj):
            adj = adj.to_sparse()
            support = torch.mm(x, self.weight)
            return torch.spmm(adj, support) + torch.sparse.mm(adj, support * 2)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sparse_times_dense_matches_torch(mode, tmp_path):
    result = convert_source(SOURCE)
    assert not result.diagnostics
    assert "torch" not in result.code
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    adj = ((rng.random((5, 5)) > 0.5) + np.eye(5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "GraphConvolution", [x, adj], tmp_path, "sparse_mm", mode)
