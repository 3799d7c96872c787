"""A file's own function put on a torch class (``torch.nn.Module.add = add_module``, then ``net.add(layer)`` on a
Sequential; DmitryUlyanov/deep-image-prior's models/common.py): the patch goes on the MindSpore class the entry names
(``nn.Cell.add``), so the converted Sequential grows the same way. Before: the line stayed ``torch.nn.Module.add =
...`` while ``import torch`` was removed (NameError at import, nothing flagged)."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import torch

from mindport import transfer_weights
from mindport.migrator import convert_source
from port_check import load_module

SOURCE = '''
import torch
import torch.nn as nn


def add_module(self, module):
    self.add_module(str(len(self) + 1), module)


torch.nn.Module.add = add_module


def build():
    net = nn.Sequential()
    net.add(nn.Linear(3, 4))
    net.add(nn.Tanh())
    net.add(nn.Linear(4, 2))
    return net
'''


def test_patched_module_method_builds_the_same_network(tmp_path):
    code = convert_source(SOURCE, "common.py").code
    assert "torch" not in code.replace("mindport", "")
    try:
        tm = load_module(SOURCE, tmp_path / "t_patch.py", "t_patch")
        mm = load_module(code, tmp_path / "m_patch.py", "m_patch")
        t, m = tm.build(), mm.build()
    finally:  # the patches are process-wide: other tests must not see them
        for cls in (torch.nn.Module, ms.nn.Cell):
            if "add" in vars(cls):
                delattr(cls, "add")
    transfer_weights(t.state_dict(), m)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(m(ms.Tensor(x)).asnumpy(), t(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
