"""A ModuleList grown from a generator (adaptive-span's ``self.layers.extend(Layer(...) for _ in range(n))``): its
conversion puts the receiver before the user's only argument (``mp_nn.extend(self.layers, ...)``), where Python
refuses a bare generator expression ("Generator expression must be parenthesized"). The whole file was copied
unconverted (MP299) and the model failed in MindSpore. The generator gets its own parentheses; compared with torch."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import torch

from mindport import convert_source, transfer_weights
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class M(nn.Module):
        def __init__(self, n=3):
            super().__init__()
            self.layers = nn.ModuleList()
            self.layers.extend(nn.Linear(4, 4) for _ in range(n))
            self.layers.append(nn.Linear(4, 2))

        def forward(self, x):
            for layer in self.layers:
                x = torch.tanh(layer(x))
            return x
''')


def test_a_module_list_extended_by_a_generator_converts_and_matches_torch(tmp_path):
    result = convert_source(SOURCE, "extended.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "for _ in range(n))" in result.code and "import torch" not in result.code
    torch.manual_seed(0)
    t_net = load_module(SOURCE, tmp_path / "t_extended.py", "t_extended").M().eval()
    m_net = load_module(result.code, tmp_path / "m_extended.py", "m_extended").M()
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
