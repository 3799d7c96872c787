"""torch layer classes used as values (timm's ``act_layer=nn.GELU`` handed on, ``dict(gelu=nn.GELU)``,
``partial(nn.LayerNorm, eps=1e-6)``, ``class LayerNorm2d(nn.LayerNorm)`` with an ``__init__`` of its own, ``is``/
``issubclass`` tests of the value): a class written into the converted file, ``TorchLayerNorm(nn.LayerNorm)``, whose
call builds MindSpore's own layer with torch's arguments bound statically and whose ``__init__`` does the same for a
class derived from it (mindport/migrator/factories.py value_class_def). Before, each was the runtime adapter
``mp_adapt.api("torch.nn.LayerNorm")``, which maps the arguments when the call happens. Real torch, real MindSpore,
PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    from functools import partial

    import torch
    import torch.nn as nn

    _ACT_LAYERS = dict(gelu=nn.GELU, relu=nn.ReLU, silu=nn.SiLU)
    _NORM_LAYERS = {"ln": nn.LayerNorm, "bn": nn.BatchNorm2d}


    def get_act_layer(name):
        return _ACT_LAYERS[name]


    class LayerNorm2d(nn.LayerNorm):
        def __init__(self, num_channels, eps=1e-6, affine=True):
            super().__init__(num_channels, eps=eps, elementwise_affine=affine)

        def forward(self, x):
            return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


    class FrozenBatchNorm(nn.BatchNorm2d):
        def __init__(self, num_features, momentum=0.2):
            super().__init__(num_features, eps=1e-3, momentum=momentum)
            self.scale = 2.0

        def forward(self, x):
            return super().forward(x) * self.scale


    class ClampedReLU(nn.ReLU):
        def __init__(self, inplace=False):
            super().__init__(inplace)


    class Mlp(nn.Module):
        def __init__(self, dim, act_layer=nn.GELU, norm_layer=nn.LayerNorm):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.act = act_layer()
            self.norm = norm_layer(dim) if norm_layer is not None else nn.Identity()
            self.is_layer_norm = norm_layer is nn.LayerNorm  # a test of the value itself
            self.norm_is_value = isinstance(self.norm, norm_layer) if isinstance(norm_layer, type) else None

        def forward(self, x):
            return self.norm(self.act(self.fc(x)))


    class Stage(nn.Module):
        def __init__(self, channels, norm_layer=nn.BatchNorm2d, act_layer=nn.ReLU):
            super().__init__()
            self.conv = nn.Conv2d(channels, channels, 3, padding=1)
            self.bn = norm_layer(channels)
            self.act = act_layer(inplace=True) if issubclass(act_layer, nn.ReLU) else act_layer()

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))


    def count_norms(model):
        return sum(isinstance(m, (nn.LayerNorm, nn.BatchNorm2d)) for m in model.modules())


    def exact_classes(model):
        return [sum(type(m) is nn.BatchNorm2d for m in model.modules()),
                sum(type(m) in (nn.GELU, nn.SiLU) for m in model.modules())]


    class Net(nn.Module):
        def __init__(self, dim=8, channels=4):
            super().__init__()
            self.stage = Stage(channels, norm_layer=_NORM_LAYERS["bn"])
            self.stage2 = Stage(channels, norm_layer=FrozenBatchNorm, act_layer=get_act_layer("silu"))
            self.ln2d = LayerNorm2d(channels)
            self.ln2d_plain = LayerNorm2d(channels, affine=False)
            self.clamp = ClampedReLU(inplace=True)
            self.mlp = Mlp(dim, act_layer=get_act_layer("gelu"), norm_layer=partial(nn.LayerNorm, eps=1e-6))
            self.mlp2 = Mlp(dim, act_layer=_ACT_LAYERS["relu"])
            self.mlp3 = Mlp(dim, norm_layer=partial(nn.LayerNorm, elementwise_affine=False))
            self.flags = (self.mlp.is_layer_norm, self.mlp2.is_layer_norm)
            self.tested = (self.mlp.norm_is_value, self.mlp2.norm_is_value)
            self.exact = exact_classes(self)
            self.norms = count_norms(self)

        def forward(self, x, y):
            h = self.clamp(self.ln2d_plain(self.ln2d(self.stage2(self.stage(x)))))
            return h, self.mlp3(self.mlp2(self.mlp(y)))
""")


def _converted():
    result = convert_source(SOURCE, "values.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.code


def test_layer_classes_as_values_are_classes_of_the_file():
    code = _converted()
    assert "mp_adapt" not in code, code  # before: mp_adapt.api("torch.nn.GELU") ... at every value
    assert "class TorchLayerNorm(nn.LayerNorm, metaclass=TorchLayerType):" in code
    assert "class LayerNorm2d(TorchLayerNorm):" in code and "class TorchLayerType(type):" in code
    assert "class FrozenBatchNorm(TorchBatchNorm2d):" in code and "class ClampedReLU(TorchReLU):" in code
    assert '_ACT_LAYERS = dict(gelu=TorchGELU, relu=TorchReLU, silu=TorchSiLU)' in code
    assert "partial(make_layernorm, eps=1e-6)" in code  # a partial is only called: the factory itself
    # the factory's default construction is MindSpore's own class with explicit arguments
    assert "return nn.BatchNorm2d(num_features=num_features, eps=float(eps), momentum=1 - (momentum)" in code


def test_the_values_build_what_torch_builds(tmp_path):
    import mindspore as ms

    torch_ns = load_module(SOURCE, tmp_path / "t_values_build.py", "t_values_build")
    ms_ns = load_module(_converted(), tmp_path / "m_values_build.py", "m_values_build")
    t_net, m_net = torch_ns.Net(), ms_ns.Net()
    assert m_net.flags == t_net.flags == (False, True)  # `norm_layer is nn.LayerNorm`: a partial is not
    assert m_net.norms == t_net.norms == 7  # isinstance of the classes built through values and bases
    assert m_net.tested == t_net.tested == (None, True)  # isinstance(self.norm, norm_layer): the value's class
    assert m_net.exact == t_net.exact == [1, 3]  # type(m) is nn.BatchNorm2d: the base's subclass is not
    assert len(m_net.trainable_params()) == len(list(t_net.parameters()))
    # the classes built: MindSpore's own where torch's class was called through a value
    assert type(m_net.mlp.norm) is ms.nn.LayerNorm and type(m_net.mlp.act) is ms.nn.GELU
    assert type(m_net.stage.bn) is ms.nn.BatchNorm2d  # MindSpore's .momentum reads torch's value (surface data)
    assert m_net.stage.bn.momentum == pytest.approx(t_net.stage.bn.momentum) == pytest.approx(0.1)
    assert m_net.stage2.bn.momentum == pytest.approx(t_net.stage2.bn.momentum) == pytest.approx(0.2)
    assert m_net.stage2.bn.eps == pytest.approx(1e-3)
    assert isinstance(m_net.ln2d, ms_ns.TorchLayerNorm) and m_net.ln2d.epsilon == pytest.approx(1e-6)
    assert not m_net.ln2d_plain.trainable_params() and not list(t_net.ln2d_plain.parameters())
    assert m_net.clamp.inplace is True and t_net.clamp.inplace is True
    assert type(m_net.stage.act).__name__ == "InplaceReLU" and t_net.stage.act.inplace  # issubclass(act_layer, nn.ReLU)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_model_built_through_layer_values_matches_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)
    y = rng.standard_normal((3, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, _converted(), "Net", [x, y], tmp_path, "layer_values", mode,
                                rtol=1e-5, atol=1e-5)
