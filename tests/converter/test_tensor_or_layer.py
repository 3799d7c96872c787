"""An attribute holding a Parameter on one branch and a layer on another (santi-pdp/segan's ``self.skip_k``: an
``nn.Parameter`` for 'alpha' skips, an ``nn.Conv1d`` for 'conv' ones) and read with a Tensor method only a tensor has
(``self.skip_k.repeat(b, 1, t)``): the Parameter's method, converted (``tile``). Before: left as written, and
MindSpore's own ``Tensor.repeat`` raised "'repeat' is not supported on this device". The methods both classes have
(``to``, ``float``, ...) stay as written; that list is torch's own."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import transfer_weights
from mindport.migrator import convert_source
from mindport.migrator.scopes import MODULE_AND_TENSOR_METHODS
from port_check import load_module

SOURCE = '''
import torch
import torch.nn as nn


class Skip(nn.Module):
    def __init__(self, size, kind):
        super().__init__()
        self.kind = kind
        if kind == 'alpha':
            alpha_ = torch.zeros(size).fill_(0.5)
            self.skip_k = nn.Parameter(alpha_.view(1, -1, 1))
        else:
            self.skip_k = nn.Conv1d(size, size, 3, padding=1)

    def forward(self, hj):
        if self.kind == 'conv':
            return self.skip_k(hj)
        skip_k = self.skip_k.repeat(hj.size(0), 1, hj.size(2))
        return skip_k * hj
'''


def test_shared_methods_are_torchs():
    shared = {n for n in set(dir(torch.Tensor)) & set(dir(torch.nn.Module)) if not n.startswith("__")}
    assert MODULE_AND_TENSOR_METHODS == shared


@pytest.mark.parametrize("kind", ["alpha", "conv"])
def test_parameter_or_layer_attribute_matches_torch(kind, tmp_path):
    code = convert_source(SOURCE, "skip.py").code
    assert "self.skip_k.tile(" in code
    t = load_module(SOURCE, tmp_path / f"t_skip_{kind}.py", f"t_skip_{kind}").Skip(4, kind)
    m = load_module(code, tmp_path / f"m_skip_{kind}.py", f"m_skip_{kind}").Skip(4, kind)
    transfer_weights(t.state_dict(), m)
    x = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
    np.testing.assert_allclose(m(ms.Tensor(x)).asnumpy(), t(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
