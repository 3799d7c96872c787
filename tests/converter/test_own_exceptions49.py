"""A raise of the project's own exception class in code a static graph compiles (golbin/WaveNet's
``check_input_size``, called from ``forward``, raises ``InputSizeError``; first contact session 48-49: 2 of its 7
models "ms-failed", GRAPH_MODE refused "Unsupported exception type: InputSizeError" whether or not the raise is
reached). The port raises the class itself in PyNative and a RuntimeError naming it in a graph
(``mp_framework.raise_own``); Python's own exceptions and a raise outside compiled code stay as written. Real torch,
real MindSpore; a fixture of our own."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class ReceptiveFieldError(Exception):
        def __init__(self, size, needed):
            super().__init__(f"input of {size} samples, the receptive field needs {needed}")


    class CausalStack(nn.Module):
        def __init__(self, c=3, layers=2):
            super().__init__()
            if layers < 1:
                raise ReceptiveFieldError(0, 1)  # in __init__: Python, never compiled
            self.convs = nn.ModuleList([nn.Conv1d(c, c, 2, dilation=2 ** i) for i in range(layers)])
            self.field = sum(2 ** i for i in range(layers)) + 1

        def check(self, x):
            if x.size(2) < self.field:
                raise ReceptiveFieldError(int(x.size(2)), self.field)
            if x.dim() != 3:
                raise ValueError("a batch of sequences")

        def forward(self, x):
            self.check(x)
            for conv in self.convs:
                x = torch.tanh(conv(x))
            return x
''')


def test_the_conversion():
    code = convert_source(SOURCE).code
    assert "mp_framework.raise_own(ReceptiveFieldError, int(x.shape[2]), self.field)" in code, code
    assert 'raise ReceptiveFieldError(0, 1)' in code and 'raise ValueError("a batch of sequences")' in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_projects_exception_in_compiled_code_compiles_and_raises(tmp_path, mode):
    import mindspore as ms
    import torch

    t_mod = load_module(SOURCE, tmp_path / f"t_own_{mode}.py", f"t_own_{mode}")
    m_mod = load_module(convert_source(SOURCE).code, tmp_path / f"m_own_{mode}.py", f"m_own_{mode}")
    torch.manual_seed(0)
    t_net, m_net = t_mod.CausalStack().eval(), m_mod.CausalStack()
    m_net.set_train(False)
    assert transfer_weights(t_net.state_dict(), m_net).ok
    x = np.random.default_rng(0).standard_normal((2, 3, 9)).astype(np.float32)
    short = x[:, :, :3].copy()
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    with pytest.raises(t_mod.ReceptiveFieldError):
        t_net(torch.from_numpy(short))
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
        if mode == "pynative":
            with pytest.raises(m_mod.ReceptiveFieldError, match="receptive field needs 4"):
                m_net(ms.Tensor(short))
        else:
            with pytest.raises(RuntimeError, match="ReceptiveFieldError raised in a static graph"):
                m_net(ms.Tensor(short))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
