"""Issue 30: a torch function or layer class kept as a value and called later is bound statically where every call of
the value is known (``ValueFlow.value_shape``, ``TableCallTransform._layer_factory`` / ``_partial_lambda``):

* ``self.act = F.silu if swiglu else F.relu`` whose every read in the file is a call ``self.act(x)`` in the class;
* ``return F.relu`` in a module-level function every call of which is bound that way (DETR's
  ``_get_activation_fn``);
* ``act = F.gelu`` in a function, read only by calls;
* ``partial(nn.LayerNorm, eps=1e-6)`` (literal keywords) handed to a parameter only ever called as
  ``norm_layer(dim)`` (DINO's ViT): a lambda building MindSpore's LayerNorm with both bound.

Before: ``mp_adapt.api("torch.nn.functional.relu")`` and ``partial(mp_adapt.api("torch.nn.LayerNorm"), eps=1e-6)``
(the run-time adapter, which GRAPH_MODE refuses). Proven against torch in PyNative and GRAPH_MODE; a value read any
other way becomes a function the file gets, with torch's parameters (``def torch_relu(input, inplace=False)``,
TableCallTransform._value_function), keeping torch's meaning; a partial whose keyword is not a literal keeps the
partial, of the factory."""
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
    import torch.nn.functional as F


    def _get_activation_fn(activation):
        if activation == "relu":
            return F.relu
        if activation == "glu":
            return F.glu
        raise RuntimeError(f"activation should be relu/glu, not {activation}.")


    class Block(nn.Module):
        def __init__(self, dim, norm_layer=nn.LayerNorm, activation="relu", swiglu=True):
            super().__init__()
            self.norm = norm_layer(dim)
            self.fc = nn.Linear(dim, 2 * dim)
            self.activation = _get_activation_fn(activation)
            self.gate = F.silu if swiglu else F.relu
            self.out = nn.Linear(dim if activation == "glu" else 2 * dim, dim)

        def forward(self, x):
            y = self.activation(self.fc(self.norm(x)))
            return self.out(self.gate(y))


    class Other(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.activation = _get_activation_fn("relu")

        def forward(self, x):
            return self.activation(self.fc(x))


    def identity(t):
        return t


    class Net(nn.Module):
        def __init__(self, dim=8, clip=True):
            super().__init__()
            self.a = Block(dim, norm_layer=partial(nn.LayerNorm, eps=1e-6))
            self.b = Block(dim, norm_layer=partial(nn.LayerNorm, eps=0.5),
                           activation="glu", swiglu=False)
            self.c = Other(dim)
            self.clip = clip

        def forward(self, x):
            act = F.gelu
            maybe_clip = partial(torch.clamp, min=-1., max=1.) if self.clip else identity
            return maybe_clip(act(self.c(self.b(self.a(x))))) * 3
""")


def test_function_values_are_mindsporess_own():
    code = convert_source(SOURCE).code
    assert "mp_adapt" not in code and "mindport" not in code, code
    assert "return ops.relu\n" in code and "self.gate = ops.silu if swiglu else ops.relu" in code, code
    assert "epsilon=1e-6" in code and "epsilon=0.5" in code, code
    # a lambda in a branch of a conditional expression is parenthesised (its body would take the rest)
    assert "maybe_clip = (lambda input: ops.clamp(input, min=-1., max=1.)) if self.clip else identity" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_function_values_match_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32) * 3
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "fnvalues", mode, atol=1e-5)


@pytest.mark.parametrize("body, kept", [
    # read other than by a call (compared, stored elsewhere): the file's native function
    ("""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = F.relu

        def forward(self, x):
            if self.act is F.relu:
                return self.act(x) + 1
            return self.act(x)
    """, 'def torch_relu(input, inplace=False):'),
    # called with two shapes (one passing inplace, which needs the run-time decision)
    ("""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = F.relu

        def forward(self, x):
            return self.act(x) + self.act(x * 2, inplace=False)
    """, 'def torch_relu(input, inplace=False):'),
    # read on another object
    ("""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = F.relu

        def forward(self, x):
            return self.act(x)


    def run(net, x):
        return net.act(x)
    """, 'def torch_relu(input, inplace=False):'),
    # a subclass in the file may call it otherwise
    ("""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = F.relu

        def forward(self, x):
            return self.act(x)


    class Sub(Net):
        pass
    """, 'def torch_relu(input, inplace=False):'),
    # the function returning it is also read as a value
    ("""
    def pick():
        return F.relu


    table = {"relu": pick}


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = pick()

        def forward(self, x):
            return self.act(x)
    """, 'def torch_relu(input, inplace=False):'),
    # a partial keyword that is not a literal: the lambda would read it at each call
    ("""
    class Block(nn.Module):
        def __init__(self, norm_layer):
            super().__init__()
            self.norm = norm_layer(4)

        def forward(self, x):
            return self.norm(x)


    EPS = 1e-6


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.b = Block(partial(nn.LayerNorm, eps=EPS))

        def forward(self, x):
            return self.b(x)
    """, 'partial(make_layernorm, eps=EPS)'),
])
def test_function_values_read_otherwise_get_a_native_function(body, kept, tmp_path):
    source = "from functools import partial\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" \
        + textwrap.dedent(body)
    code = convert_source(source).code
    assert kept in code, code
    # and still torch's meaning
    import mindspore as ms
    import torch
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    torch_net = load_module(source, tmp_path / "t_neg.py", "t_neg").Net().eval()
    ms_net = load_module(code, tmp_path / "m_neg.py", "m_neg").Net()
    ms_net.set_train(False)
    from tests.converter.port_check import transfer_weights
    transfer_weights(torch_net.state_dict(), ms_net)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
