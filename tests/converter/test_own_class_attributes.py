"""Issue 30: ``args.dim`` where ``args`` is a parameter annotated with a class whose attributes are its own (a
``@dataclass`` config, a module class of the file deriving only from ``nn.Module``: llama2.c's ``args: ModelArgs``,
mamba-minimal's, x-transformers' ``attn_layers: AttentionLayers``) reads the attribute as written
(``object_surface._own_typed_parameters``); before, every such read of a name some mapped layer keeps under another
name (``dim``, ``bias``, ``weight``) went through ``mp_adapt.layer_attribute``. A parameter nothing types, or typed
with a subclass of a mapped layer, keeps the run-time read. Proven against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    from dataclasses import dataclass

    import torch
    import torch.nn as nn


    @dataclass
    class ModelArgs:
        dim: int = 8
        bias: bool = False
        weight: float = 0.5


    class Layers(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dim = dim
            self.fc = nn.Linear(dim, dim)

        def forward(self, x):
            return self.fc(x)


    class Block(nn.Module):
        def __init__(self, args: ModelArgs, layers: "Layers"):
            super().__init__()
            self.fc = nn.Linear(args.dim, layers.dim, bias=args.bias)
            self.scale = args.weight
            self.layers = layers

        def forward(self, x):
            return self.layers(self.fc(x)) * self.scale


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block(ModelArgs(), Layers(8))

        def forward(self, x):
            return self.block(x)
""")


def test_own_class_attributes_read_as_written():
    code = convert_source(SOURCE).code
    assert "mindport" not in code, code
    assert "nn.Dense(in_channels=args.dim, out_channels=layers.dim, has_bias=args.bias)" in code, code
    assert "self.scale = args.weight" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_own_class_attributes_match_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "owncls", mode, atol=1e-5)


NEGATIVE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Norm(nn.LayerNorm):
        pass


    def first_weight(norm: Norm, other):
        return norm.weight, other.weight


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = Norm(4)
            self.emb = nn.Embedding(5, 4)
            with torch.no_grad():
                self.norm.weight.fill_(2.0)
                self.emb.weight.fill_(3.0)
            w, e = first_weight(self.norm, self.emb)
            self.w0 = float(w.sum())
            self.e0 = float(e.sum())

        def forward(self, x):
            return self.norm(x) * self.w0 + self.e0
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_layer_typed_or_untyped_parameters_keep_the_runtime_read(mode, tmp_path):
    code = convert_source(NEGATIVE).code
    assert "mp_adapt.layer_attribute(norm, 'weight')" in code, code
    assert "mp_adapt.layer_attribute(other, 'weight')" in code, code
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(NEGATIVE, code, "Net", [x], tmp_path, "owncls_neg", mode, atol=1e-5)


# nanoGPT's blocks: ``config`` is untyped, but ``config.n_embd`` (a member no torch layer has) is read before
# ``config.bias`` on every path, so torch would have raised there for a layer: ``config.bias`` reads as written
DUCK = textwrap.dedent("""
    from dataclasses import dataclass

    import torch
    import torch.nn as nn


    @dataclass
    class GPTConfig:
        n_embd: int = 8
        bias: bool = False
        dropout: float = 0.0


    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)

        def forward(self, x):
            return self.c_proj(torch.relu(self.c_fc(x)))


    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            width = config.n_embd
            self.ln = nn.LayerNorm(width)
            self.fc = nn.Linear(width, width, bias=config.bias)
            self.mlp = MLP(config)

        def forward(self, x):
            return x + self.mlp(self.fc(self.ln(x)))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block(GPTConfig())

        def forward(self, x):
            return self.block(x)
""")


def test_a_member_no_layer_has_read_first_shows_a_plain_object():
    code = convert_source(DUCK).code
    assert "mp_adapt" not in code, code
    assert "has_bias=config.bias" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_duck_typed_config_matches_torch(mode, tmp_path):
    code = convert_source(DUCK).code
    x = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)
    assert_port_matches_in_mode(DUCK, code, "Net", [x], tmp_path, "duck", mode, atol=1e-5)


@pytest.mark.parametrize("body", [
    # the evidence only in a branch
    """
    def read(config, flag):
        if flag:
            n = config.n_embd
        return config.bias
    """,
    # after the read
    """
    def read(config):
        b = config.bias
        n = config.n_embd
        return b
    """,
    # only in an assert (python -O drops it)
    """
    def read(config):
        assert config.n_embd > 0
        return config.bias
    """,
    # a member some torch layer has (nn.LayerNorm's normalized_shape)
    """
    def read(config):
        shape = config.normalized_shape
        return config.bias
    """,
    # on the right of `or`
    """
    def read(config):
        ok = True or config.n_embd
        return config.bias
    """,
    # the name rebound
    """
    def read(config):
        n = config.n_embd
        config = config.inner
        return config.bias
    """,
])
def test_no_evidence_keeps_the_runtime_read(body):
    source = "import torch\nimport torch.nn as nn\n" + textwrap.dedent(body)
    code = convert_source(source).code
    assert "mp_adapt.layer_attribute(config, 'bias')" in code, code


def test_module_members_are_torchs():
    import torch

    from mindport.migrator.rules.object_surface import MODULE_MEMBERS
    assert set(MODULE_MEMBERS) == {n for n in dir(torch.nn.Module()) if not n.startswith("_")}
