"""A shape-changing in-place method on a layer's output (ozanciga/gans-with-pytorch's CT-GAN critic, disc54 first
contact: ``critic_value = self.l1(y).unsqueeze_(1).unsqueeze_(2)``) went through ``mp_inplace.unsqueeze_``, the
runtime's write-back into the receiver, which a graph cannot compile (ms-failed in GRAPH_MODE once the LayerNorm of
the same model was fixed). The class: the call of a layer attribute whose every construction gives a new tensor
(native_facts.FRESH_LAYERS: a Linear, a convolution, a norm; a Sequential ending in one, as the critic's
``self.l1 = nn.Sequential(nn.Linear(128, 1))``) is a tensor nothing else holds, and so is an in-place
method's result on such a tensor (it gives back its receiver): its shape change is MindSpore's own out-of-place
method (TableCallTransform._new_object). A layer that may give back its input (Identity, Dropout) keeps the runtime's
in-place form. Compared with torch, PyNative and compiled."""
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


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(6, 1)
            self.l2 = nn.Sequential(nn.Linear(6, 3), nn.Linear(3, 1))
            self.keep = nn.Identity()

        def forward(self, y):
            critic_value = self.l1(y).unsqueeze_(1).unsqueeze_(2)
            return critic_value * 2.0 + y.mean() + self.l2(y).unsqueeze_(1).unsqueeze_(2)


    class Kept(nn.Module):
        def __init__(self):
            super().__init__()
            self.keep = nn.Identity()

        def forward(self, y):
            z = self.keep(y).unsqueeze_(1)
            return z + y.sum()
""")


def test_the_identity_keeps_the_runtime_form():
    result = convert_source(SOURCE, "critic.py")
    assert "self.l1(y).unsqueeze(1).unsqueeze(2)" in result.code, result.code
    assert "self.l2(y).unsqueeze(1).unsqueeze(2)" in result.code, result.code  # a Sequential ending in a Linear
    assert "mp_inplace.unsqueeze_(self.keep(y), dim=1)" in result.code, result.code


@pytest.mark.parametrize("graph", [False, True])
def test_a_layer_output_changed_in_shape_matches_torch(graph, tmp_path, monkeypatch):
    result = convert_source(SOURCE, "critic.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_ns: dict = {}
    exec(compile(SOURCE, "critic_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    (tmp_path / f"critic_ms{int(graph)}.py").write_text(result.code)  # the graph compiler reads its source
    monkeypatch.syspath_prepend(str(tmp_path))
    m_ns = vars(importlib.import_module(f"critic_ms{int(graph)}"))
    torch.manual_seed(0)
    t_model = t_ns["Critic"]().eval()
    m_model = m_ns["Critic"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    with torch.no_grad():
        expected = t_model(torch.tensor(x)).numpy()
    call = ms.jit(m_model.construct) if graph else m_model
    got = call(ms.Tensor(x)).asnumpy()
    assert got.shape == expected.shape == (3, 1, 1, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
