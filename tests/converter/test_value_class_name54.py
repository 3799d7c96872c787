"""A torch layer class used as a value keeps torch's ``__name__`` (timm54's first contact with timm's models).

timm's ``get_norm_act_layer(norm_layer)`` finds the norm+act layer of a norm class by its name
(``_NORM_TO_NORM_ACT_MAP[norm_layer.__name__.lower()]``); ``norm_layer = norm_layer or nn.BatchNorm2d`` is a value
class of the converted file (``TorchBatchNorm2d``), whose name was the file's, so the lookup failed ("No equivalent
norm_act layer for torchbatchnorm2d": mobilenetv3, efficientnet, ghostnet, rexnet). The class is any name-based
lookup of a torch layer class handed on as a value: the value class's ``__name__`` is torch's.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
from port_check import assert_port_matches_in_mode

from mindport import convert_source

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class NormAct(nn.Module):
        def __init__(self, num_features, norm_layer=nn.BatchNorm2d, act_layer=nn.GELU):
            super().__init__()
            self.norm = norm_layer(num_features)
            self.act = act_layer()

        def forward(self, x):
            return self.act(self.norm(x))


    _NORM_TO_NORM_ACT = dict(batchnorm2d=NormAct)
    _ACT_SCALE = {'gelu': 2.0, 'relu': 3.0}


    def get_norm_act_layer(norm_layer):
        type_name = norm_layer.__name__.lower()
        norm_act = _NORM_TO_NORM_ACT.get(type_name, None)
        assert norm_act is not None, f"No equivalent norm_act layer for {type_name}"
        return norm_act


    class Net(nn.Module):
        def __init__(self, norm_layer=None, act_layer=None):
            super().__init__()
            norm_layer = norm_layer or nn.BatchNorm2d
            act_layer = act_layer or nn.GELU
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = get_norm_act_layer(norm_layer)(4, norm_layer=norm_layer, act_layer=act_layer)
            self.scale = _ACT_SCALE[act_layer.__name__.lower()]

        def forward(self, x):
            return self.bn(self.conv(x)) * self.scale
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_layer_class_value_is_found_by_its_torch_name(tmp_path, mode, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = convert_source(SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "_mp_torch_name = 'BatchNorm2d'" in result.code
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "value_class_name", mode)
