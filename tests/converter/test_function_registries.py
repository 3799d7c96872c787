"""torch functions kept as values where their calls are not all known: activation registries (timm's
``_ACT_DEFAULT = dict(relu=F.relu, silu=F.silu, ...)`` read through ``get_act_fn(name)``, geffnet's the same), a
default handed on. Each becomes a function the file gets (TableCallTransform._value_function,
factories.factory_def), ``def torch_silu(input, inplace=False)``: torch's parameters and defaults, the entry's own
conversion of a call passing each by name, a ``switch`` value (``inplace=True``) decided when it is called. Before,
each was the runtime adapter ``mp_adapt.api("torch.nn.functional.silu")``. Real torch, real MindSpore, PyNative and
GRAPH_MODE (the registry's functions are compiled in ``construct``)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    _ACT_FNS = dict(relu=F.relu, relu6=F.relu6, silu=F.silu, hard_swish=F.hardswish, hard_sigmoid=F.hardsigmoid,
                    mish=F.mish, leaky_relu=F.leaky_relu, celu=F.celu, selu=F.selu)


    def get_act_fn(name="relu"):
        return _ACT_FNS[name]


    class Block(nn.Module):
        def __init__(self, act_fn=F.silu):
            super().__init__()
            self.fc = nn.Linear(6, 6)
            self.act_fn = act_fn

        def forward(self, x):
            return self.act_fn(self.fc(x))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.names = ["relu", "relu6", "silu", "hard_swish", "hard_sigmoid", "mish", "leaky_relu", "celu", "selu"]
            self.fns = [get_act_fn(n) for n in self.names]
            self.block = Block()
            self.leaky = get_act_fn("leaky_relu")

        def forward(self, x):
            outs = [fn(x * 3) for fn in self.fns]
            y = self.block(x)
            return tuple(outs) + (y, self.leaky(x, 0.2), self.leaky(x, negative_slope=0.3))
""")

NAMES = ("relu", "relu6", "silu", "hardswish", "hardsigmoid", "mish", "leaky_relu", "celu", "selu")


def test_function_values_are_native_functions():
    code = convert_source(SOURCE).code
    assert "mp_adapt" not in code, code
    for name in NAMES:
        assert f"def torch_{name}(input" in code, (name, code)
    assert "def torch_silu(input, inplace=False):" in code and "act_fn=torch_silu" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_function_registries_match_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "fnreg", mode, rtol=1e-5, atol=1e-5)


def test_inplace_through_the_native_function_matches_torch(tmp_path):
    """``fn(x, inplace=True)`` of a registry's function: the switch's branch, torch's result and torch's input."""
    import mindspore as ms
    import torch

    source = SOURCE + textwrap.dedent("""

        def run(x):
            y = x * 1
            out = get_act_fn("relu6")(y, inplace=True)
            z = x - 0.5
            return out, y, get_act_fn("silu")(z, True), z
    """)
    code = convert_source(source).code
    assert "mp_adapt" not in code, code
    from tests.converter.port_check import load_module

    want = load_module(source, tmp_path / "t_inpl.py", "t_inpl").run(torch.tensor([[-1.0, 0.5, 7.0]]))
    got = load_module(code, tmp_path / "m_inpl.py", "m_inpl").run(ms.Tensor(np.array([[-1.0, 0.5, 7.0]], np.float32)))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=1e-6)
