"""An init applied to a helper function's own argument (batch 9b's TabM: ``def _init_rsqrt_uniform_(tensor, d):
return nn.init.uniform_(tensor, -d**-0.5, d**-0.5)``, called with ``self.weight`` and with a fresh
``torch.zeros(out_features)`` later copied into the bias). The argument was taken for a Parameter and the init
written ``tensor.set_data(initializer(...))``: "'Tensor' object has no attribute 'set_data'" for the fresh tensor.
Which one the argument is, only the call knows: the runtime init fills a Parameter (set_data) and a plain Tensor
(in place), and returns it, as torch's does."""
from __future__ import annotations

import textwrap

import numpy as np

from port_check import torch_and_converted

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def _init_rsqrt_uniform_(tensor, d):
        d_rsqrt = d ** -0.5
        return nn.init.uniform_(tensor, -d_rsqrt, d_rsqrt)


    def _init_constant_(tensor: torch.Tensor, value: float) -> torch.Tensor:
        return nn.init.constant_(tensor, value)


    class Layer(nn.Module):
        def __init__(self, d_in=4, d_out=3):
            super().__init__()
            self.weight = nn.Parameter(torch.empty(d_out, d_in))
            self.bias = nn.Parameter(torch.empty(d_out))
            self.scale = nn.Parameter(torch.empty(d_out))
            _init_rsqrt_uniform_(self.weight, d_in)
            bias_init = torch.zeros(d_out)
            bias_init = _init_rsqrt_uniform_(bias_init, d_in)
            with torch.no_grad():
                self.bias.copy_(bias_init)
            _init_constant_(self.scale, 0.5)
            shift = _init_constant_(torch.zeros(d_out), -1.5)
            self.register_buffer("shift", shift)

        def forward(self, x):
            return (x @ self.weight.t() + self.bias) * self.scale + self.shift
""")


def test_an_init_of_a_helpers_argument_fills_a_parameter_and_a_plain_tensor(tmp_path, monkeypatch):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    t_ns, m_ns = torch_and_converted(SOURCE, "init_helper_argument", tmp_path, monkeypatch)
    t_net, m_net = t_ns["Layer"]().eval(), m_ns["Layer"]()
    m_net.set_train(False)
    got = {p.name: p.asnumpy() for p in m_net.get_parameters()}
    bound = 4 ** -0.5
    for name in ("weight", "bias"):  # drawn (different generators): U(-1/2, 1/2), as torch's
        assert np.abs(got[name]).max() <= bound and np.unique(got[name]).size == got[name].size, (name, got[name])
    np.testing.assert_array_equal(got["scale"], t_net.scale.detach().numpy())  # 0.5
    np.testing.assert_array_equal(m_net.shift.asnumpy(), t_net.shift.numpy())  # -1.5, a fresh tensor's init
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
