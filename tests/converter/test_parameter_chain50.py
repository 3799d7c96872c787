"""A method chain on a function's parameter (disc50, daiquocnguyen/Graph-Transformer's TextGNN/utils.py):
``adj.dot(d_mat_inv_sqrt).transpose().dot(d_mat_inv_sqrt)`` of a SciPy or NumPy matrix handed in. A parameter is
typed a tensor for method calls, and so was what its methods return: the no-argument ``.transpose()`` (torch's needs
``dim0, dim1``) was flagged MP102 and the line kept as written, the migration "partial". The class: a value a
parameter's own methods made is only as much a tensor as the parameter; a call torch's method refuses there is the
program's own object's, left as written, and ``Tensor.dot`` on a receiver that is no MindSpore tensor is its own
``dot`` (a matrix product), as ``sum``/``mean`` already were."""
from __future__ import annotations

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = '''
import numpy as np
import torch


def normalize_adj(adj):
    rowsum = np.array(adj.sum(1))
    d_inv_sqrt = np.power(rowsum, -0.5).flatten()
    d_mat_inv_sqrt = np.diag(d_inv_sqrt)
    return adj.dot(d_mat_inv_sqrt).transpose().dot(d_mat_inv_sqrt)


def as_tensor(adj):
    return torch.from_numpy(normalize_adj(adj)).float()
'''


def test_a_parameters_method_chain_torch_refuses_is_left_to_the_object(tmp_path):
    result = convert_source(SOURCE, "utils.py")
    assert not [d for d in result.diagnostics if d.code == "MP102"], [d.format() for d in result.diagnostics]
    adj = np.array([[1.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 3.0]])
    torch_side = load_module(SOURCE, tmp_path / "t_chain50.py", "t_chain50")
    ms_side = load_module(result.code, tmp_path / "m_chain50.py", "m_chain50")
    expected = torch_side.normalize_adj(adj)
    np.testing.assert_allclose(ms_side.normalize_adj(adj), expected, rtol=1e-12)
    np.testing.assert_allclose(ms_side.as_tensor(adj).asnumpy(), torch_side.as_tensor(adj).numpy(), rtol=1e-6)
