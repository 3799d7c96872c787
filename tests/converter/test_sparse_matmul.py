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


SPARSE_PARAMETER = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Propagate(nn.Module):
        def __init__(self, n, A_in=None):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.A_in = nn.Parameter(torch.sparse.FloatTensor(n, n))
            if A_in is not None:
                self.A_in.data = A_in
            self.A_in.requires_grad = False

        def forward(self, x):
            return torch.matmul(self.A_in, self.lin(x))
""")


def test_legacy_sparse_parameter_converts_and_its_weights_transfer(tmp_path):
    """KGAT holds its attention matrix as ``nn.Parameter(torch.sparse.FloatTensor(n, n))`` replaced through
    ``.data = A_in`` (a ``to_sparse()`` tensor): the legacy constructor had no entry, so the line kept torch and the
    MindSpore tensor given to ``.data`` failed ("Variable data has to be a tensor"). It is the dense zeros now, and
    the state_dict's sparse tensor transfers as its dense values."""
    import mindspore as ms
    import torch

    import mindport
    from port_check import load_module

    code = convert_source(SPARSE_PARAMETER).code
    assert "torch" not in code, code
    a = ((np.arange(16).reshape(4, 4) % 3 == 0) + np.eye(4)).astype(np.float32)
    torch_net = load_module(SPARSE_PARAMETER, tmp_path / "t_sp.py", "t_sp").Propagate(4, torch.from_numpy(a).to_sparse())
    ms_net = load_module(code, tmp_path / "m_sp.py", "m_sp").Propagate(4)
    assert float(ms_net.A_in.abs().sum()) == 0.0
    torch.save(torch_net.state_dict(), tmp_path / "sp.pt")
    report = mindport.transfer_weights(tmp_path / "sp.pt", ms_net)
    assert not report.missing and not report.unexpected
    np.testing.assert_array_equal(ms_net.A_in.asnumpy(), a)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
