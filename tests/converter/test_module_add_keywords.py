"""``add_module`` / ``register_module`` / ``register_parameter`` with their arguments passed by keyword convert like
the positional forms (mindport.runtime.layers' functions): imgclsmob's MixConv (trials imgclsmob/mixnet_s) builds its
convolutions with ``self.add_module(name=str(i), module=nn.Conv2d(...))``, which was left as a method call the Cell
lacks ("'MixConv' object has no attribute 'add_module'", PyNative build). The parameter names come from torch's own
signatures (read here from torch). The slice: a MixConv-shaped layer (keyword add_module in a loop, its children run
in forward), register_module and register_parameter by keyword, a None parameter; both modes, torch's numbers."""
from __future__ import annotations

import inspect
import textwrap

import numpy as np
import pytest

from mindport import convert_source
from mindport.migrator.rules.module_methods import ModuleMethodTransform
from port_check import assert_port_matches_in_mode

MIX = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class MixConv(nn.Module):
        def __init__(self, channels=4, kernels=(1, 3)):
            super().__init__()
            self.splits = [channels // len(kernels)] * len(kernels)
            for i, k in enumerate(kernels):
                self.add_module(name=str(i), module=nn.Conv2d(self.splits[i], self.splits[i], k, padding=k // 2))
            self.register_module("mix", module=nn.Conv2d(channels, channels, 1))
            self.register_parameter(name="scale", param=nn.Parameter(torch.linspace(0.5, 1.5, channels)))
            self.register_parameter("shift", param=None)

        def forward(self, x):
            xs = torch.split(x, self.splits, dim=1)
            out = torch.cat([getattr(self, str(i))(t) for i, t in enumerate(xs)], dim=1)
            return self.mix(out) * self.scale.view(1, -1, 1, 1)
""")


def test_the_parameter_names_are_torchs():
    import torch.nn as nn

    for name, params in ModuleMethodTransform.RUNTIME_PARAMETERS.items():
        assert tuple(inspect.signature(getattr(nn.Module, name)).parameters)[1:] == params, name


def test_keyword_forms_go_through_the_runtime():
    code = convert_source(MIX).code
    assert ".add_module(" not in code.replace("mp_nn.add_module(", "") and "register_parameter(self" in code, code
    assert 'mp_nn.add_module(self, str(i), nn.Conv2d(' in code, code
    assert 'mp_nn.register_parameter(self, "shift", None)' in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_mixconv_matches_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
    assert_port_matches_in_mode(MIX, convert_source(MIX).code, "MixConv", [x], tmp_path, "mixconv", mode,
                                rtol=1e-5, atol=1e-5)


# timm's ResNet: ``for stage in stage_modules: self.add_module(*stage)`` (name, module) pairs unpacked into the call;
# it was left as the Cell's missing method ("'ResNet' object has no attribute 'add_module'")
STARRED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Stages(nn.Module):
        def __init__(self):
            super().__init__()
            stages = [("s0", nn.Linear(4, 6)), ("s1", nn.Linear(6, 3))]
            for stage in stages:
                self.add_module(*stage)
            extra = ("scale", nn.Parameter(torch.linspace(0.5, 1.5, 3)))
            self.register_parameter(*extra)

        def forward(self, x):
            return self.s1(torch.tanh(self.s0(x))) * self.scale
""")


def test_starred_forms_go_through_the_runtime():
    code = convert_source(STARRED).code
    assert "mp_nn.add_module(self, *stage)" in code and "mp_nn.register_parameter(self, *extra)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_starred_stages_match_torch(tmp_path, mode):
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(STARRED, convert_source(STARRED).code, "Stages", [x], tmp_path, "stages", mode,
                                rtol=1e-5, atol=1e-6)
