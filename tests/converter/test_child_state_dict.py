"""A child layer's ``state_dict()`` and ``load_state_dict(sd)`` (Hyena's filter: ``for name, v in
c.state_dict().items(): getattr(c, name)`` on each layer of a Sequential): torch's keys are relative to the module the
method is called on. They stay the Cell's own methods (MindSpore 2.10 has torch's); ``parameters_dict()``, what
``state_dict()`` used to become, names each Parameter by its global name (``body.0.weight`` on the child), and
``mindspore.load_param_into_net`` matches global names, so a child loaded a parent's or a sibling's dict into nothing
and only warned. Compared with torch: the keys, the loaded values, a checkpoint round trip and strict's errors."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from mindport import transfer_weights
from tests.converter.port_check import torch_and_converted

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 3))
            self.norm = nn.LayerNorm(3)
            self.head = nn.Linear(3, 3)
            self.tags = []
            for c in self.body.children():
                for name, v in c.state_dict().items():
                    self.tags.append((name, tuple(getattr(c, name).shape)))

        def forward(self, x):
            return self.head(self.norm(self.body(x)))


    def child_keys(model):
        return [list(c.state_dict()) for c in model.body.children()] + [list(model.norm.state_dict())]


    def copy_into_head(model):
        model.head.load_state_dict(model.body[2].state_dict())


    def round_trip(model, other, path):
        torch.save(model.body.state_dict(), path)
        other.body.load_state_dict(torch.load(path))


    def strict_refuses(model):
        try:
            model.head.load_state_dict(model.state_dict())
        except RuntimeError as e:
            return "Unexpected key" in str(e) and "Missing key" in str(e)
        return False


    def lenient(model):
        model.head.load_state_dict({"bias": model.body[0].bias}, strict=False)
""")


@pytest.fixture()
def pair(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(SOURCE, "child_net", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model, m_model = t_ns["Net"](), m_ns["Net"]()
    transfer_weights(t_model.state_dict(), m_model)
    return t_ns, m_ns, t_model, m_model


def _forward(t_model, m_model):
    import mindspore as ms

    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x)).numpy()
    return m_model(ms.Tensor(x)).asnumpy(), want


def test_a_childs_keys_are_relative_to_it(pair):
    t_ns, m_ns, t_model, m_model = pair
    assert m_model.tags == t_model.tags == [("weight", (3, 4)), ("bias", (3,)), ("weight", (3, 3)), ("bias", (3,))]
    # LayerNorm's weight and bias are MindSpore's gamma/beta (the checkpoint conversion maps them), still relative
    assert m_ns["child_keys"](m_model) == [["weight", "bias"], [], ["weight", "bias"], ["gamma", "beta"]]
    assert t_ns["child_keys"](t_model)[:3] == [["weight", "bias"], [], ["weight", "bias"]]


def test_a_child_loads_a_siblings_state_dict(pair):
    t_ns, m_ns, t_model, m_model = pair
    t_ns["copy_into_head"](t_model)
    m_ns["copy_into_head"](m_model)
    np.testing.assert_array_equal(m_model.head.weight.asnumpy(), m_model.body[2].weight.asnumpy())
    got, want = _forward(t_model, m_model)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_childs_checkpoint_round_trip(pair, tmp_path):
    t_ns, m_ns, t_model, m_model = pair
    torch.manual_seed(1)
    t_other, m_other = t_ns["Net"](), m_ns["Net"]()
    transfer_weights(t_other.state_dict(), m_other)  # other weights than the model's: the load must change them
    t_ns["round_trip"](t_model, t_other, str(tmp_path / "body.pt"))
    m_ns["round_trip"](m_model, m_other, str(tmp_path / "body.ckpt"))
    got, want = _forward(t_other, m_other)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    before, _ = _forward(t_model, m_model)
    assert not np.allclose(got, before)  # head and norm kept the other model's weights


def test_strict_and_lenient_loads_as_torchs(pair):
    t_ns, m_ns, t_model, m_model = pair
    assert t_ns["strict_refuses"](t_model) and m_ns["strict_refuses"](m_model)
    t_ns["lenient"](t_model)
    m_ns["lenient"](m_model)
    np.testing.assert_array_equal(m_model.head.bias.asnumpy(), t_model.head.bias.detach().numpy())
