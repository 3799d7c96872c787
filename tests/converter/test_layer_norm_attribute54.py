"""nn.LayerNorm given an attribute that holds several axes (ozanciga/gans-with-pytorch's CT-GAN residual block, disc54
first contact: ``self.ln_dims = [n_input, spatial_dim, spatial_dim]`` in each branch, then
``nn.LayerNorm(self.ln_dims)``; the ResidualBlock and the Discriminator failed in MindSpore, "For 'LayerNorm', gamma
or beta shape must match input shape": MindSpore's own LayerNorm normalises the last axis only).

The class: a ``normalized_shape`` given as an attribute of ``self`` that the class's methods only ever assign a list
or tuple display of several items is a shape of several axes (native_facts.sequence_attributes), as a name read as a
sequence is (test_layer_norm_axes): mindport.runtime.layers.OptionalAffineLayerNorm, its begin axis from the input's
rank. An attribute assigned anything else keeps MindSpore's layer. Compared with torch, PyNative and compiled."""
from __future__ import annotations

import importlib
import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source
from mindport.migrator.weights import transfer_weights

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, channels, size, resample=None):
            super().__init__()
            if resample == 'down':
                self.conv = nn.Conv2d(channels, channels, 3, padding=1, stride=2)
                self.ln_dims = [channels, size, size]
            else:
                self.conv = nn.Conv2d(channels, channels, 3, padding=1)
                self.ln_dims = (channels, size, size)
            self.width = channels
            self.norm = nn.LayerNorm(self.ln_dims)
            self.last = nn.LayerNorm(self.width)

        def forward(self, x):
            y = self.conv(torch.relu(self.norm(x)))
            return self.last(y.permute(0, 2, 3, 1))


    def build():
        model = Block(4, 6)
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.randn_like(p))
        return model
""")


@pytest.mark.parametrize("graph", [False, True])
def test_an_attribute_of_several_axes_normalises_them(graph, tmp_path, monkeypatch):
    result = convert_source(SOURCE, "ctblock.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "OptionalAffineLayerNorm(normalized_shape=tuple(self.ln_dims)" in result.code, result.code
    assert "self.last = nn.LayerNorm(" in result.code, result.code  # an attribute assigned a number: MindSpore's
    t_ns: dict = {}
    exec(compile(SOURCE, "ctblock_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    (tmp_path / f"ctblock_ms{int(graph)}.py").write_text(result.code)  # the graph compiler reads its source
    monkeypatch.syspath_prepend(str(tmp_path))
    m_ns = vars(importlib.import_module(f"ctblock_ms{int(graph)}"))
    torch.manual_seed(0)
    t_model = t_ns["build"]()
    m_model = m_ns["Block"](4, 6)
    transfer_weights(t_model.state_dict(), m_model)
    m_model.set_train(False)
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
    with torch.no_grad():
        expected = t_model.eval()(torch.tensor(x)).numpy()
    call = ms.jit(m_model.construct) if graph else m_model
    np.testing.assert_allclose(call(ms.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_an_attribute_assigned_other_values_is_not_a_shape():
    from mindport.migrator.native_facts import sequence_attributes
    import libcst as cst

    cls = cst.parse_module(textwrap.dedent("""
        class A:
            def __init__(self, n, dims):
                self.a = [n, n]
                self.b = [n, n]
                self.b = n
                self.c = [*dims]
                self.d = (n, 2)
                self.e = [n]
                self.d2 = (n, 2)
                self.d2 += (1,)
    """)).body[0]
    assert sequence_attributes(cls) == frozenset({"a", "d"})
