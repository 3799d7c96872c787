"""``params[i] = ...`` on an ``nn.ParameterList`` (Pathformer's ``reset_parameters``: ``init.uniform_(self.B[i],
-bound, bound)`` converts to ``self.B[i] = mp_init.uniform_(tensor=self.B[i], ...)``; a model may also write
``self.P[i] = nn.Parameter(t)``): the runtime's ParameterList had no ``__setitem__`` ("'ParameterList' object does not
support item assignment" when the model was built). Torch's ParameterList takes the assignment; the port now does too,
keeps torch's parameter names (``B.0``) and matches torch, in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""\
    import math
    import torch
    import torch.nn as nn
    from torch.nn import init


    class Weights(nn.Module):
        def __init__(self, n=3, i=4, o=5):
            super().__init__()
            self.n = n
            self.P = nn.ParameterList([nn.Parameter(torch.Tensor(i, o), requires_grad=True) for _ in range(n)])
            self.B = nn.ParameterList([nn.Parameter(torch.Tensor(1, o), requires_grad=True) for _ in range(n)])
            self.S = nn.ParameterList([nn.Parameter(torch.zeros(o)) for _ in range(n)])
            self.reset_parameters()

        def reset_parameters(self):
            for weight in self.P:
                init.kaiming_uniform_(weight, a=math.sqrt(5))
            for i in range(self.n):
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.P[i])
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(self.B[i], -bound, bound)
            for i in range(self.n):
                self.S[-1 - i] = nn.Parameter(torch.full((self.P[0].shape[1],), 0.5 + i))

        def forward(self, x):
            out = 0
            for i in range(self.n):
                out = out + (x @ self.P[i] + self.B[i]) * self.S[i]
            return out
""")


def test_item_assignment_converts_and_keeps_torch_names(tmp_path):
    code = convert_source(SOURCE).code
    assert "self.B[i] = mp_init.uniform_(" in code, code
    net = load_module(code, tmp_path / "m_pl_names.py", "m_pl_names").Weights()
    names = sorted(name for name, _ in net.parameters_and_names())
    assert names == sorted(f"{k}.{i}" for k in "PBS" for i in range(3)), names
    np.testing.assert_allclose(net.S[0].asnumpy(), np.full(5, 2.5, np.float32))
    with pytest.raises(IndexError):
        net.S[3] = net.S[0]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_port_matches_torch(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Weights", [x], tmp_path, "pl_setitem", mode)
