"""A torch layer class used as a value whose MindSpore construction is the runtime's own Cell (timm53, issue 30:
timm's port kept 10 of its 20 by-name bindings ``mp_adapt.api("torch.nn.ReLU6")`` / ``("torch.nn.SELU")``, in
``create_act.py``'s registry ``dict(relu=nn.ReLU, ..., relu6=nn.ReLU6, selu=nn.SELU)`` and in the tuple defaults
``act_layer=(nn.ReLU6, None)`` of cpubone and efficientvit_mit).

The class: ``nn.SELU``'s entry builds ``mindport.runtime.layers.SeLU`` (MindSpore's CPU gradient is wrong), and in a
project where a float64 tensor can come to be ``nn.ReLU6`` builds ``mp_nn.ReLU6`` (MindSpore's kernel refuses
float64). Such a value's value class (``TorchReLU6``) or factory was refused or written depending on whether the
file had already needed ``mindport.runtime.layers`` at that point (``_native_construction`` refused any name of a
runtime module the file imported so far): a registry listing ``nn.ReLU`` first (whose ``inplace=True`` branch,
``mp_nn.InplaceReLU``, imports it) lost ReLU6 and SELU to the run-time adapter, one listing them first did not.
The construction's callee being the class the entry's every written construction builds
(``TableCallTransform._own_layer_class``) is now allowed, whatever was imported before. Compared with torch
(float32 through the model; float64 through the registry's ReLU6), and isinstance against the value holds."""
from __future__ import annotations

import importlib
import textwrap

import mindspore as ms
import numpy as np
import torch

from mindport import convert_source
from mindport.migrator.weights import transfer_weights

SOURCE = textwrap.dedent("""
    from typing import Optional, Tuple, Type

    import torch
    import torch.nn as nn

    _ACTS = dict(relu=nn.ReLU, relu6=nn.ReLU6, selu=nn.SELU)


    def get_act(name):
        return _ACTS[name]


    class ConvAct(nn.Module):
        def __init__(self, c, act_layer=None):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 1)
            self.act = act_layer(inplace=False) if act_layer is not None else nn.Identity()

        def forward(self, x):
            return self.act(self.conv(x))


    class DSConv(nn.Module):
        def __init__(self, c, act_layer: Tuple[Optional[Type[nn.Module]], ...] = (nn.ReLU6, None)):
            super().__init__()
            self.dw = ConvAct(c, act_layer=act_layer[0])
            self.pw = ConvAct(c, act_layer=act_layer[1])
            self.gate = get_act("selu")()
            self.is_relu6 = isinstance(self.dw.act, act_layer[0])

        def forward(self, x):
            return self.gate(self.pw(self.dw(x)) * 4.0 - 2.0)


    def clip64(x):
        return get_act("relu6")()(x.double() * 4.0)
""")


def _port(tmp_path, monkeypatch, name):
    result = convert_source(SOURCE, f"{name}.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    (tmp_path / f"{name}_ms.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    return result.code, vars(importlib.import_module(f"{name}_ms"))


def test_runtime_layer_values_are_value_classes_and_match_torch(tmp_path, monkeypatch):
    code, m_ns = _port(tmp_path, monkeypatch, "acts53")
    assert "mp_adapt" not in code, code  # no by-name binding left
    assert "class TorchReLU6(mp_nn.ReLU6, metaclass=" in code, code  # float64 possible in the file: the subclass
    assert "class TorchSELU(mp_nn.SeLU, metaclass=" in code, code
    assert "dict(relu=TorchReLU, relu6=TorchReLU6, selu=TorchSELU)" in code, code
    assert "= (TorchReLU6, None)" in code, code

    t_ns: dict = {}
    exec(compile(SOURCE, "acts53_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    torch.manual_seed(0)
    t_model = t_ns["DSConv"](3).eval()
    m_model = m_ns["DSConv"](3)
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    assert t_model.is_relu6 is True and m_model.is_relu6 is True
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    with torch.no_grad():
        expected = t_model(torch.tensor(x)).numpy()
    got = m_model(ms.Tensor(x)).asnumpy()
    assert (expected < 0).any() and (expected > 0).any()  # SELU's both sides reached
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)

    x64 = np.linspace(-1.0, 2.0, 13)
    want = t_ns["clip64"](torch.tensor(x64)).numpy()
    have = m_ns["clip64"](ms.Tensor(x64))
    assert have.dtype == ms.float64
    np.testing.assert_allclose(have.asnumpy(), want, rtol=0, atol=0)
