"""proof56: a module's tensor made a leaf on ``self`` and handed to an optimizer.

minimalRL's SAC ``PolicyNet``: ``self.log_alpha = torch.tensor(np.log(0.01))``, ``self.log_alpha.requires_grad =
True``, ``optim.Adam([self.log_alpha], lr=...)``. MindSpore's optimizers take only Parameters: the Cell did not build
(MindSpore's own TypeError "can only concatenate str (not "_TensorMeta") to str"). The attribute becomes the Parameter
the optimizer updates (mindport.runtime.optim.leaf_parameter), and the weight map expects no torch value for it (torch
registers none)."""
from __future__ import annotations

import sys

import numpy as np

LEAF = '''
import torch
import torch.nn as nn
import torch.optim as optim


class Policy(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=lr)
        self.log_alpha = torch.tensor(-1.5)
        self.log_alpha.requires_grad = True
        self.alpha_optimizer = optim.Adam([self.log_alpha], lr=0.1)
        self.scale = torch.ones(2, requires_grad=True)
        self.scale_optimizer = optim.SGD([self.scale], lr=0.5)

    def forward(self, x):
        return torch.tanh(self.fc(x)) * 2


def make():
    return Policy(1e-3)
'''


def test_leaf_attributes_become_the_parameters_their_optimizers_update(tmp_path):
    from mindport.migrator import convert_source

    code = convert_source(LEAF).code
    assert "mp_optim.leaf_parameter(self, 'log_alpha', self.log_alpha)" in code, code
    assert "mp_optim.leaf_parameter(self, 'scale', " in code, code

    import mindspore as ms
    import torch

    (tmp_path / "leaf_ms.py").write_text(code)
    sys.path.insert(0, str(tmp_path))
    try:
        import leaf_ms
    finally:
        sys.path.remove(str(tmp_path))
    cell = leaf_ms.Policy(1e-3)
    assert isinstance(cell.log_alpha, ms.Parameter) and cell.alpha_optimizer.parameters[0] is cell.log_alpha
    # torch registers no parameter for a leaf tensor attribute: an optimizer over the whole model built later (SAC's
    # actor loss reaches log_alpha) must not take it, nor a checkpoint
    assert not list(cell.get_parameters(expand=False)), list(cell.get_parameters(expand=False))  # none of its own

    namespace: dict = {}
    exec(compile(LEAF, "leaf_torch", "exec"), namespace)
    ref = namespace["Policy"](1e-3)
    for _ in range(3):  # the loss reads the attribute; the optimizer writes it, in both
        ref.alpha_optimizer.zero_grad()
        loss = (ref.log_alpha.exp() * 3.0 - 1.0) ** 2
        loss.backward()
        ref.alpha_optimizer.step()

        def alpha_loss():
            return (ms.ops.exp(cell.log_alpha) * 3.0 - 1.0) ** 2

        grads = ms.grad(alpha_loss, None, cell.alpha_optimizer.parameters)()
        cell.alpha_optimizer(grads)
    assert ref.log_alpha.item() != -1.5
    np.testing.assert_allclose(cell.log_alpha.asnumpy(), ref.log_alpha.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_leaf_attribute_model_is_proven(tmp_path):
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "policy.py").write_text(LEAF)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="policy.py:Policy", cache=False)
    (m,) = models
    assert m["status"] == "proven", m
