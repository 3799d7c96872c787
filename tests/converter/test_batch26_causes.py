"""First-contact causes of batch26 (issues 29/30), each checked by running torch and the conversion on the same
input, in PyNative and in GRAPH_MODE where the cause was a graph failure.

* device queries inside forward (spikefairway/CapsNet-PyTorch's routing: ``if torch.cuda.is_available():`` in
  DigitCaps.forward): converted to ``ms.hal.is_available("GPU")``, a builtin a static graph cannot call ("has no
  attribute '__code__'"). The surface, enumerated from the installed torch: every ``is_available`` /
  ``device_count`` / ``is_built`` of torch's device and backend modules (:data:`QUERY_MODULES`), each read in one
  forward and compared with torch's answer (here, on a CPU machine) in both modes. torch.backends.mkldnn/mkl/openmp/
  opt_einsum/kleidiai ask about torch's own CPU libraries and stay flagged (MP103): no MindSpore meaning.
* torch.Tensor.set_ (aegroto's QuantizableLinear.apply_quantization), left unconverted before.
"""
import numpy as np
import pytest

from mindport import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

DEVICE_QUERIES = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        if torch.cuda.is_available():
            h = h.cuda()
        if torch.backends.cudnn.is_available() or torch.backends.mps.is_available() or torch.xpu.is_available():
            h = h * 2
        return h + torch.cuda.device_count()
'''


QUERY_MODULES = ("torch.cuda", "torch.xpu", "torch.mps", "torch.mtia", "torch.cpu", "torch.accelerator",
                 "torch.backends.cudnn", "torch.backends.cuda", "torch.backends.mps")


def _query_source():
    """A forward summing every device query the installed torch has in QUERY_MODULES (bools as 0/1)."""
    import importlib

    calls = []
    for name in QUERY_MODULES:
        module = importlib.import_module(name)
        calls += [f"{name}.{q}()" for q in ("is_available", "device_count", "is_built") if callable(getattr(module, q, None))]
    assert len(calls) >= 15, calls  # torch 2.13: 17
    body = "".join(f"        n = n + int({c})\n" for c in calls)
    return ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
            f"        n = 0\n{body}        return x * 1.0 + n\n"), calls


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_every_device_query_of_torch_is_a_constant_in_both_modes(tmp_path, mode):
    source, calls = _query_source()
    result = convert_source(source)
    assert "torch" not in result.code.replace("mindport", ""), result.code
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(source, result.code, "Net", [x], tmp_path, "allq", mode)


@pytest.mark.parametrize("mode", ["graph"])
def test_device_queries_in_forward_are_constants_in_both_modes(tmp_path, mode):
    result = convert_source(DEVICE_QUERIES)
    assert "hal.is_available" not in result.code and "mp_framework.cuda_available()" in result.code
    assert not [d for d in result.diagnostics if d.code.startswith("MP1")], result.diagnostics
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(DEVICE_QUERIES, result.code, "Net", [x], tmp_path, "devq", mode)


SET_SOURCE = '''import torch
import torch.nn as nn


class QuantLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3))
        self.bias = nn.Parameter(torch.randn(4))
        self.register_buffer("scale", torch.ones(1))

    def apply_quantization(self):
        with torch.no_grad():
            q = torch.round(self.weight / 0.25) * 0.25
            self.weight.set_(q)
            self.bias.set_(torch.zeros(4))
            self.scale.set_(torch.full((2,), 0.5))

    def forward(self, x):
        return nn.functional.linear(x, self.weight, self.bias) * self.scale.sum()
'''


def test_tensor_set_replaces_a_parameter_and_a_buffer_as_torch(tmp_path):
    """aegroto's QuantizableLinear: ``self.weight.set_(quantized)`` was left unconverted (MP103). torch.Tensor.set_
    is now a mapping entry (mindport.runtime.inplace.set_): the receiver takes the source's values, shape and dtype
    (the buffer here changes shape), compared with torch after the method ran."""
    import mindspore as ms
    import torch

    from mindport import transfer_weights
    from tests.converter.port_check import load_module

    result = convert_source(SET_SOURCE)
    assert "mp_inplace.set_" in result.code and not [d for d in result.diagnostics if d.code == "MP103"]
    torch.manual_seed(0)
    t_net = load_module(SET_SOURCE, tmp_path / "t_set.py", "t_set").QuantLinear().eval()
    m_net = load_module(result.code, tmp_path / "m_set.py", "m_set").QuantLinear()
    transfer_weights(t_net.state_dict(), m_net)
    t_net.apply_quantization()
    m_net.apply_quantization()
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(m_net.weight.asnumpy(), t_net.weight.detach().numpy())
