"""nn.LayerNorm over several axes (STGCN: ``nn.LayerNorm([n_vertex, channels[0]], eps=1e-12)``): MindSpore's
LayerNorm takes the axis it begins at and its CPU kernel refuses a negative one other than -1, so a normalized_shape
of several axes, literal or a display of names, goes to mindport.runtime.layers.OptionalAffineLayerNorm, which
computes the axis from the input's rank. Compared with torch, PyNative and compiled."""
from __future__ import annotations

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
        def __init__(self, n_vertex, channels):
            super().__init__()
            self.ln = nn.LayerNorm([n_vertex, channels[0]], eps=1e-12)
            self.ln_literal = nn.LayerNorm((5, 4))
            self.ln_plain = nn.LayerNorm(channels[0], elementwise_affine=False)

        def forward(self, x):
            return self.ln(x) + self.ln_literal(x) * 2 + self.ln_plain(x)


    def build():
        model = Block(5, [4, 8])
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.randn_like(p))
        return model
""")


@pytest.mark.parametrize("graph", [False, True])
def test_a_layer_norm_over_several_axes_matches_torch(graph, tmp_path, monkeypatch):
    result = convert_source(SOURCE, "block.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert result.code.count("OptionalAffineLayerNorm(") == 3, result.code
    t_ns: dict = {}
    exec(compile(SOURCE, "block_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    (tmp_path / "block_ms.py").write_text(result.code)  # a module file: the graph compiler reads its source
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    m_ns = vars(importlib.import_module("block_ms"))
    torch.manual_seed(0)
    t_model = t_ns["build"]()
    m_model = m_ns["Block"](5, [4, 8])
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 4)).astype(np.float32)
    with torch.no_grad():
        expected = t_model(torch.tensor(x)).numpy()
    call = ms.jit(m_model.construct) if graph else m_model
    np.testing.assert_allclose(call(ms.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)


NAMED = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class MixerBlock(nn.Module):
        # MLP-Mixer (batch18 first contact): the shape of two axes arrives as one name, read as a sequence beside it
        def __init__(self, input_dim, hidden_dim):
            super().__init__()
            self.layer_norm = nn.LayerNorm(input_dim)
            self.token = nn.Linear(input_dim[-2], hidden_dim)
            self.out = nn.Linear(hidden_dim, input_dim[-2])

        def forward(self, x):
            y = self.layer_norm(x).transpose(1, 2)
            return self.out(torch.tanh(self.token(y))).transpose(1, 2) + x


    class Plain(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.fc = nn.Linear(dim, dim * 2)

        def forward(self, x):
            return self.fc(self.norm(x))


    def build():
        model = MixerBlock((6, 4), 8)
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.randn_like(p))
        return model
""")


@pytest.mark.parametrize("graph", [False, True])
def test_a_shape_name_read_as_a_sequence_normalises_its_axes(graph, tmp_path, monkeypatch):
    result = convert_source(NAMED, "mixer.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "OptionalAffineLayerNorm(normalized_shape=tuple(input_dim)" in result.code, result.code
    assert "self.norm = nn.LayerNorm(" in result.code  # a name with no sequence use stays MindSpore's layer
    t_ns: dict = {}
    exec(compile(NAMED, "mixer_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    (tmp_path / "mixer_ms.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    m_ns = vars(importlib.import_module("mixer_ms"))
    torch.manual_seed(0)
    t_model = t_ns["build"]()
    m_model = m_ns["MixerBlock"]((6, 4), 8)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((2, 6, 4)).astype(np.float32)
    with torch.no_grad():
        expected = t_model(torch.tensor(x)).numpy()
    call = ms.jit(m_model.construct) if graph else m_model
    np.testing.assert_allclose(call(ms.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)
