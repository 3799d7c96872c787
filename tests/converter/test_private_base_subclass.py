"""A project class derived from torch's private ``_BatchNorm`` (asteroid's norms.py: ``class BatchNorm(_BatchNorm)``
overriding ``_check_input_dim`` so one class takes 3-D and 4-D inputs). Before, the runtime refused the class when it
was defined, so the converted module did not import and none of its classes (nor its importers') could be proven. It
is now a Cell with torch's batch norm behaviour and names: compared with torch in eval and in training (running
statistics and their counter included), in PyNative and compiled as a static graph."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    from torch import nn
    from torch.nn.modules.batchnorm import _BatchNorm


    class BatchNorm(_BatchNorm):
        \"\"\"Wrapper class for pytorch BatchNorm1D and BatchNorm2D\"\"\"

        def _check_input_dim(self, input):
            if input.dim() < 2 or input.dim() > 4:
                raise ValueError("expected 4D or 3D input (got {}D input)".format(input.dim()))


    class Block(nn.Module):
        def __init__(self, chan=4, momentum=0.1):
            super().__init__()
            self.conv = nn.Conv1d(chan, chan, 3, padding=1)
            self.norm = BatchNorm(chan, momentum=momentum)
            self.norm2d = BatchNorm(chan, affine=False)

        def forward(self, x):
            y = self.norm(self.conv(x))
            return y, self.norm2d(y.unsqueeze(-1) * 2.0 + 1.0).squeeze(-1)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_a_batch_norm_subclass_matches_torch(tmp_path, mode, momentum):
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    result = convert_source(SOURCE)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    name = f"bnsub_{mode}_{momentum is None}"
    torch.manual_seed(0)
    t_net = load_module(SOURCE, tmp_path / f"t_{name}.py", f"t_{name}").Block(momentum=momentum)
    m_net = load_module(result.code, tmp_path / f"m_{name}.py", f"m_{name}").Block(momentum=momentum)
    with torch.no_grad():  # statistics and affine parameters away from their initial values
        t_net.norm.running_mean.uniform_(-1, 1)
        t_net.norm.running_var.uniform_(0.5, 2)
        t_net.norm.weight.uniform_(0.5, 2)
        t_net.norm.bias.uniform_(-1, 1)
    report = transfer_weights(t_net.state_dict(), m_net)
    assert not report.missing and not report.unexpected, report
    if mode == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        rng = np.random.default_rng(0)
        for train in (False, True, True, False):
            x = (rng.standard_normal((3, 4, 7)) * 2 + 0.5).astype(np.float32)
            t_net.train(train)
            m_net.set_train(train)
            want = t_net(torch.from_numpy(x))
            got = m_net(ms.Tensor(x))
            for w, g in zip(want, got):
                np.testing.assert_allclose(g.asnumpy(), w.detach().numpy(), rtol=1e-5, atol=1e-5)
        for key, value in t_net.state_dict().items():
            if not key.startswith("norm"):
                continue  # the convolution's weight is laid out (out, in, 1, k) on MindSpore
            ms_value = dict(m_net.parameters_and_names())[key].asnumpy()
            np.testing.assert_allclose(ms_value, value.numpy(), rtol=1e-5, atol=1e-6, err_msg=key)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
