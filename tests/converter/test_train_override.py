"""A model class's own ``train(self, mode=True)`` (a backbone keeping its BatchNorms frozen): torch's
``model.train()``/``model.eval()`` reach it, on the model itself and on every sub-module (``Module.train`` calls each
child's ``train``). The converter made every such call ``set_train`` and left the override as a method nothing
called, so the BatchNorm trained on batch statistics. The override becomes the class's ``set_train``
(``@mp_nn.train_override``), and MindSpore's ``set_train`` calls it in the sub-cells. Compared with torch: the
outputs in training mode and the mode flags."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import torch

from mindport import transfer_weights
from tests.converter.port_check import torch_and_converted

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Backbone(nn.Module):
        def __init__(self, freeze_bn=True):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.bn = nn.BatchNorm2d(4)
            self.freeze_bn = freeze_bn
            self.calls = 0

        def train(self, mode=True):
            super().train(mode)
            self.calls += 1
            if self.freeze_bn:
                for m in self.modules():
                    if isinstance(m, nn.BatchNorm2d):
                        m.eval()
            return self

        def forward(self, x):
            return self.bn(self.conv(x))


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = Backbone()
            self.head = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.0))

        def forward(self, x):
            return self.head(self.backbone(x).mean((2, 3)))


    def put_in_training(model):
        model.eval()
        model.train()
        return model.backbone.calls, model.backbone.bn.training, model.backbone.conv.training, model.training
""")


def test_a_sub_modules_train_override_runs_as_in_torch(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(SOURCE, "frozen", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model, m_model = t_ns["Model"](), m_ns["Model"]()
    with torch.no_grad():  # running statistics other than the initial ones, so a BatchNorm in eval mode shows
        t_model.backbone.bn.running_mean.uniform_(-1, 1)
        t_model.backbone.bn.running_var.uniform_(0.5, 2)
    transfer_weights(t_model.state_dict(), m_model)
    t_flags = t_ns["put_in_training"](t_model)
    m_flags = m_ns["put_in_training"](m_model)
    assert t_flags == (2, False, True, True)
    assert m_flags == t_flags
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_model(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
