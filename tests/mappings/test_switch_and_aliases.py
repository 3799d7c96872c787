"""The table engine's `switch` (an argument value that calls another target), unsupported arguments spelled at their
default, and torch.nn.modules.* names: converted by the real converter, run in both frameworks."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mindport.migrator import convert_source
from mindport.proofs.function import _load

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def _both(code: str, *arrays):
    """(torch results, MindSpore results, torch inputs after, MindSpore inputs after, converted code)."""
    import mindspore as ms

    result = convert_source(code, "<test>")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_in = [torch.tensor(a) for a in arrays]
    m_in = [ms.Tensor(a.copy()) for a in arrays]
    with torch.no_grad():
        t_out = _load(code, "t").run(*t_in)
    m_out = _load(result.code, "m").run(*m_in)
    return t_out, m_out, [t.numpy() for t in t_in], [m.asnumpy() for m in m_in], result.code


@pytest.mark.parametrize("call", [
    "nn.ReLU(inplace=True)(x)", "nn.Hardswish(inplace=True)(x)", "nn.LeakyReLU(0.2, True)(x)",
    "nn.ELU(inplace=True)(x)", "nn.Hardtanh(-0.5, 0.5, inplace=True)(x)", "F.relu(x, inplace=True)",
    "F.leaky_relu(x, 0.3, inplace=True)", "F.hardswish(x, inplace=True)", "F.silu(x, inplace=True)",
])
def test_inplace_true_changes_the_input_like_torch(call):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    t_out, m_out, t_after, m_after, code = _both(HEAD + f"def run(x):\n    return {call}\n", x)
    np.testing.assert_allclose(m_out.asnumpy(), t_out.numpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(t_after[0], x)  # torch changed its input ...
    np.testing.assert_allclose(m_after[0], t_after[0], rtol=1e-5, atol=1e-6)  # ... and so does the port
    assert "inplace=" not in code  # the argument went into the choice of target


def test_inplace_false_or_omitted_keeps_the_plain_target():
    code = convert_source(HEAD + "def run(x):\n    return nn.ReLU(inplace=False)(x), nn.ReLU()(x), F.relu(x)\n",
                          "<test>").code
    assert "mp_nn" not in code and "mp_inplace" not in code and "nn.ReLU()" in code


def test_switch_on_a_variable_is_decided_when_the_call_happens():
    """nn.ReLU(inplace=flag): the file's native factory makes the entry's choice with the value the call gets."""
    import mindspore as ms
    import torch

    source = HEAD + "def build(flag):\n    return nn.ReLU(inplace=flag)\n"
    result = convert_source(source, "<test>")
    assert result.diagnostics == [] and "return make_relu(inplace=flag)" in result.code
    assert "    if inplace:\n        return mp_nn.InplaceReLU()\n    return nn.ReLU()" in result.code
    torch_ns: dict = {}
    exec(compile(source, "t", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(result.code, "m", "exec"), ms_ns)
    for flag in (True, False):
        data = np.array([[-1.0, 2.0]], np.float32)
        x_t, x_m = torch.tensor(data), ms.Tensor(data)
        np.testing.assert_array_equal(ms_ns["build"](flag)(x_m).asnumpy(), torch_ns["build"](flag)(x_t).numpy())
        np.testing.assert_array_equal(x_m.asnumpy(), x_t.numpy())  # changed in place only when flag is True


def test_unsupported_argument_at_its_default_is_not_written():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    mode = "compute_mode='use_mm_for_euclid_dist_if_necessary'"
    t_out, m_out, *_ , code = _both(HEAD + f"def run(x, y):\n    return torch.cdist(x, y, {mode})\n", x, x + 1)
    assert "compute_mode" not in code
    np.testing.assert_allclose(m_out.asnumpy(), t_out.numpy(), rtol=1e-5, atol=1e-5)
    flagged = convert_source(HEAD + "def run(x, y):\n    return torch.cdist(x, y, compute_mode='donot_use_mm_for_euclid_dist')\n",
                             "<test>")
    assert [d.code for d in flagged.diagnostics] == ["MP102"]


def test_torch_nn_modules_paths_are_the_torch_nn_layers():
    import mindspore as ms

    from mindport.migrator.weights import transfer_weights

    code = HEAD + ("from torch.nn.modules.linear import Linear\n\n\n"
                   "class Net(torch.nn.modules.module.Module):\n"
                   "    def __init__(self):\n"
                   "        super().__init__()\n"
                   "        self.conv = torch.nn.modules.conv.Conv2d(2, 3, 3, padding=1)\n"
                   "        self.fc = Linear(3, 2)\n"
                   "        self.act = torch.nn.modules.activation.ReLU()\n\n"
                   "    def forward(self, x):\n"
                   "        return self.fc(self.act(self.conv(x)).mean((2, 3)))\n")
    result = convert_source(code, "<test>")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    torch.manual_seed(0)
    t_net = _load(code, "t").Net().eval()
    m_net = _load(result.code, "m").Net()
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype(np.float32)
    with torch.no_grad():
        expected = t_net(torch.tensor(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)
