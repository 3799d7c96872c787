"""torch.nn.LayerNorm used as a value and called with a shape of several axes (ditschuk/pytorch-tsmixer, disc51 first
contact: ``norm_type: type[nn.Module] = nn.LayerNorm`` handed on, then ``norm_type((sequence_length, channels))``;
3 of its 8 models failed in MindSpore, "For 'LayerNorm', gamma or beta shape must match input shape").

The class: a LayerNorm whose ``normalized_shape`` the converter writes as a parameter, known only when called -- the
file's factory (``make_layernorm``), its value class (``TorchLayerNorm``) and the lambda a value whose every call is
known becomes -- built MindSpore's nn.LayerNorm, which
normalises the last axis only. Such a construction now tests the shape when it is called: several axes build
mindport.runtime.layers.OptionalAffineLayerNorm (the begin axis from the input's rank), one axis MindSpore's own layer.
A value only ever called is a lambda; it makes the same test where the file calls a handed value with a display of
several items (``norm_type((length, channels))``: the case of tsmixer's layers.py), and stays MindSpore's layer
otherwise (``norm_layer(dim)``). Compared with torch, PyNative and compiled."""
from __future__ import annotations

import importlib
import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source
from mindport.migrator.weights import transfer_weights

# the value handed on and compared (a value class), and a value only ever called (a lambda)
SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Mixing(nn.Module):
        def __init__(self, length, channels, norm_type: type[nn.Module] = nn.LayerNorm):
            super().__init__()
            self.norm = norm_type((length, channels))
            self.last = norm_type(channels)
            self.fc = nn.Linear(channels, channels)

        def forward(self, x):
            return self.last(self.fc(self.norm(x)))


    class Stack(nn.Module):
        def __init__(self, length, channels, norm_type: type[nn.Module] = nn.LayerNorm, depth=2):
            super().__init__()
            self.blocks = nn.Sequential(*[Mixing(length, channels, norm_type=norm_type) for _ in range(depth)])
            self.plain = norm_type == nn.LayerNorm

        def forward(self, x):
            return self.blocks(x) * (2.0 if self.plain else 1.0)


    class Called(nn.Module):
        def __init__(self, length, channels, norm=nn.LayerNorm):
            super().__init__()
            self.norm = norm((length, channels))
            self.last = norm(channels)

        def forward(self, x):
            return self.last(self.norm(x) * 3.0)
""")


def _port(tmp_path, monkeypatch, name):
    result = convert_source(SOURCE, f"{name}.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    (tmp_path / f"{name}_ms.py").write_text(result.code)  # a module file: the graph compiler reads its source
    monkeypatch.syspath_prepend(str(tmp_path))
    return result.code, vars(importlib.import_module(f"{name}_ms"))


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("cls", ["Stack", "Called"])
def test_a_layer_norm_value_called_with_several_axes_matches_torch(cls, graph, tmp_path, monkeypatch):
    code, m_ns = _port(tmp_path, monkeypatch, f"mixing_{cls.lower()}_{int(graph)}")
    assert "isinstance(normalized_shape, (tuple, list)) and len(normalized_shape) > 1" in code, code
    t_ns: dict = {}
    exec(compile(SOURCE, "mixing_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    torch.manual_seed(0)
    t_model = t_ns[cls](5, 4).eval()
    with torch.no_grad():
        for p in t_model.parameters():
            p.copy_(torch.randn_like(p))
    m_model = m_ns[cls](5, 4)
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32) * 3 + 1
    with torch.no_grad():
        expected = t_model(torch.tensor(x)).numpy()
    call = ms.jit(m_model.construct) if graph else m_model
    np.testing.assert_allclose(call(ms.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_a_value_called_with_one_name_stays_mindspores_layer():
    source = textwrap.dedent("""
        import torch.nn as nn
        from functools import partial


        class Block(nn.Module):
            def __init__(self, dim, norm_layer=partial(nn.LayerNorm, eps=1e-6), act=nn.LayerNorm):
                super().__init__()
                self.norm = norm_layer(dim)
                self.other = act(dim)

            def forward(self, x):
                return self.other(self.norm(x))
    """)
    code = convert_source(source, "block.py").code
    assert "mindport" not in code and "len(normalized_shape) > 1" not in code, code
