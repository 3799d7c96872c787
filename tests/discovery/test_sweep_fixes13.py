"""Fixes from the discovery sweep's thirteenth pass (issue 29, manifest rows 50-54 and 115 onwards): constructors and
forwards inherited from a project base, tensors handed to ``register_buffer``."""
from __future__ import annotations

from pathlib import Path

INHERITED = '''
import torch
import torch.nn as nn


class WeightedError(nn.Module):
    def __init__(self, weights, action_dim):
        super().__init__()
        self.register_buffer("weights", weights)
        self.action_dim = action_dim

    def forward(self, pred, target):
        """pred, target: [ batch x horizon x features ]"""
        err = self._error(pred, target)
        head = err[:, 0, :self.action_dim] / (1.0 + self.weights[0, :self.action_dim].abs())
        return (err * self.weights).mean() + head.mean()


class AbsError(WeightedError):  # defines neither __init__ nor forward
    def _error(self, pred, target):
        return torch.abs(pred - target)


class MaskedDense(nn.Module):
    def __init__(self, in_features, out_features, mask):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.register_buffer("mask", mask)

    def forward(self, x):
        return nn.functional.linear(x, self.linear.weight * self.mask, self.linear.bias)


class Residual(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(torch.tanh(self.fc1(x)))


class GatedResidual(Residual):  # the base's __init__ and forward
    gated = True
'''


def test_inherited_constructors_and_buffers_are_built_and_proven(tmp_path):
    """jannerm/diffuser's ``class WeightedL1(WeightedLoss)`` defines only ``_loss``: it was tried as
    ``WeightedL1()`` ("WeightedLoss.__init__() missing 2 required positional arguments"); scan now gives a class
    without its own ``__init__`` / ``forward`` the parameters of the nearest project base that has one. And
    ``WeightedLoss(weights, ...)`` / pytorch-flows' ``MaskedLinear(..., mask)`` hand the argument to
    ``register_buffer`` ("cannot assign 'int' object to buffer 'mask'"): a tensor. Each class is built, converted
    and proven against torch (``prove_models``: both sides run, outputs compared)."""
    from mindport.discovery.prove import prove_models
    from mindport.discovery.scan import discover
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "losses.py").write_text(INHERITED)
    found = {c.name: c for c in discover(src)}
    assert [p.name for p in found["AbsError"].params] == ["weights", "action_dim"]
    assert [p.name for p in found["AbsError"].forward] == ["pred", "target"]
    assert [p.name for p in found["GatedResidual"].params] == ["dim", "hidden"]
    assert found["MaskedDense"].params[2].use == "tensor"
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="losses.py:*", cache=False)
    by_name = {m["class"].split(":")[1]: m for m in models}
    for name in ("AbsError", "MaskedDense", "GatedResidual", "Residual"):
        assert by_name[name]["status"] == "proven", by_name[name]
    assert "table(16, 16)" in by_name["MaskedDense"]["ctor"], by_name["MaskedDense"]["ctor"]
