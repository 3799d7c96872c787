"""Methods written after ``forward`` convert as the same methods written before it.

The converter runs every rule in one traversal, and the first rule whose leave hook rewrites a node used to end the
node's hooks. ``forward`` is renamed ``construct`` by the first rule, so the later rules never closed that function:
their stacks of enclosing functions, classes and narrowings kept it, and every method after ``forward`` was read as
if inside it. Two consequences real code met (first-contact batch 5, MODNet; and any backbone whose ``train``
override follows ``forward``):

* a layer member read on a method's parameter (``def _init_norm(self, norm): nn.init.constant_(norm.weight, 1)``)
  was left as ``norm.weight``, which a MindSpore BatchNorm2d does not have (its ``gamma``): "'BatchNorm2d' object
  has no attribute 'weight'" when the model is built;
* a ``train(self, mode=True)`` override after ``forward`` was not made the class's ``set_train``, so
  ``model.train()`` and ``model.eval()`` no longer reached it.

A class, a function or a block is now closed by every rule (``engine._CHAINED``). Compared with torch.
"""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import torch

from mindport import convert_source, transfer_weights
from tests.converter.port_check import torch_and_converted

INIT_AFTER_FORWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.norm = nn.BatchNorm2d(4)
            self.inst = nn.InstanceNorm2d(4, affine=True)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    self._init_conv(m)
                elif isinstance(m, nn.BatchNorm2d) or isinstance(m, nn.InstanceNorm2d):
                    self._init_norm(m)

        def forward(self, x):
            return self.inst(self.norm(self.conv(x)))

        def _init_conv(self, conv):
            nn.init.constant_(conv.weight, 0.1)
            if conv.bias is not None:
                nn.init.constant_(conv.bias, 0.2)

        def _init_norm(self, norm):
            if norm.weight is not None:
                nn.init.constant_(norm.weight, 2.0)
                nn.init.constant_(norm.bias, 0.5)


    def scale_of(norm):
        return norm.weight
""")

TRAIN_AFTER_FORWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.bn = nn.BatchNorm2d(4)

        def forward(self, x):
            return self.bn(self.conv(x))

        def train(self, mode=True):
            super().train(mode)
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.eval()
            return self


    def put_in_training(model):
        model.eval()
        model.train()
        return model.bn.training, model.conv.training, model.training
""")


def test_a_layer_read_on_a_parameter_after_forward_is_decided_at_run_time():
    code = convert_source(INIT_AFTER_FORWARD).code
    assert "mp_adapt.layer_attribute(norm, 'weight')" in code
    assert "return mp_adapt.layer_attribute(norm, 'weight')" in code  # a module-level function after the class too


def test_init_through_a_method_after_forward_builds_and_matches_torch(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(INIT_AFTER_FORWARD, "init_after_forward", tmp_path, monkeypatch)
    t_net, m_net = t_ns["Net"]().eval(), m_ns["Net"]()  # the converted class is built: its init ran
    m_net.set_train(False)
    np.testing.assert_allclose(m_ns["scale_of"](m_net.norm).asnumpy(), np.full(4, 2.0, np.float32))
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)  # its own init, no transfer


def test_a_train_override_after_forward_is_the_cells_set_train(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(TRAIN_AFTER_FORWARD, "train_after_forward", tmp_path, monkeypatch)
    assert "def set_train(self, mode=True)" in convert_source(TRAIN_AFTER_FORWARD).code
    t_model, m_model = t_ns["Backbone"](), m_ns["Backbone"]()
    transfer_weights(t_model.state_dict(), m_model)
    assert t_ns["put_in_training"](t_model) == (False, True, True)
    assert m_ns["put_in_training"](m_model) == (False, True, True)
