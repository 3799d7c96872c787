"""``nn.LayerNorm(d, elementwise_affine=False)`` and ``nn.LayerNorm(d, bias=False)`` (x-transformers, DiT-style
blocks): MindSpore's LayerNorm always has gamma and beta, so these were MP102. They go to
``mindport.runtime.layers.OptionalAffineLayerNorm``, with the Parameters torch's module has; the port (weights moved
by name) matches torch in PyNative and compiled, for each combination and through the runtime adapter when the flag
is a variable."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, affine=False):
            super().__init__()
            self.plain = nn.LayerNorm(6, elementwise_affine=False)
            self.scale_only = nn.LayerNorm(6, bias=False, eps=1e-6)
            self.full = nn.LayerNorm(6)
            self.chosen = nn.LayerNorm(6, elementwise_affine=affine)
            self.proj = nn.Linear(6, 6)
            with torch.no_grad():
                self.scale_only.weight.uniform_(0.5, 1.5)
                self.full.bias.uniform_(-1, 1)

        def forward(self, x):
            x = self.plain(self.proj(x))
            return self.chosen(self.full(self.scale_only(x) * 2))
""")


def test_no_layer_norm_is_left_flagged():
    result = convert_source(SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    code = result.code
    assert "mp_nn.OptionalAffineLayerNorm(normalized_shape=(6,), elementwise_affine=False, epsilon=1e-05)" in code
    assert "mp_nn.OptionalAffineLayerNorm(normalized_shape=(6,), bias=False, epsilon=1e-6)" in code
    assert 'make_layernorm(6, elementwise_affine=affine)' in code  # decided when built (native19: was the adapter)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_layer_norms_without_affine_match(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((2, 3, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Net", [x], tmp_path, "ln", mode, atol=1e-5)


def test_the_cells_have_the_parameters_torch_has(tmp_path):
    from port_check import load_module

    ms_net = load_module(convert_source(SOURCE).code, tmp_path / "m_ln_params.py", "m_ln_params").Net()
    torch_net = load_module(SOURCE, tmp_path / "t_ln_params.py", "t_ln_params").Net()
    names = sorted(n for n, _ in ms_net.parameters_and_names() if not n.startswith("proj"))
    assert names == ["full.beta", "full.gamma", "scale_only.gamma"]
    assert sorted(n for n in torch_net.state_dict() if not n.startswith("proj")) == [
        "full.bias", "full.weight", "scale_only.weight"]
