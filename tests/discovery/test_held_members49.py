"""Modules a model holds in a plain Python list or dict (``self.blocks = [Block(c) for _ in range(n)]``, not an
``nn.ModuleList``; golbin/WaveNet's ResidualStack, session 48): torch runs them but does not register them, so its
state_dict has none of their tensors, and the port (``mindport.runtime.layers.own_names``) keeps them unregistered
too. The proof moved the state_dict only, so the port's copies ran at their own random draw and the model
"diverged" (ResidualStack: max rel 1.15e4). The torch side now hands their tensors under their attribute paths and
the weight plan fills the members at the same paths (mindport.runtime.held_members: one rule for both); a checkpoint,
which never has them, leaves them at their own init with a warning (MP301), never silently. Real torch, real
MindSpore; fixtures of our own."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.discovery._prove import prove_files

HELD = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c, dilation):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3, padding=dilation, dilation=dilation)
        self.gate = nn.Linear(c, c)

    def forward(self, x):
        y = torch.tanh(self.conv(x))
        return x + self.gate(y.transpose(1, 2)).transpose(1, 2)


class ListStack(nn.Module):
    def __init__(self, c=4, layers=3):
        super().__init__()
        self.inp = nn.Conv1d(c, c, 1)
        self.blocks = [Block(c, 2 ** i) for i in range(layers)]

    def forward(self, x):
        x = self.inp(x)
        for block in self.blocks:
            x = block(x)
        return x


class DictHeads(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.heads = {"a": nn.Linear(c, 3), "b": nn.Sequential(nn.Linear(c, c), nn.Tanh(), nn.Linear(c, 3))}
        self.body = ListStack(c, 2)

    def forward(self, x):
        h = self.body(x).mean(-1)
        return self.heads["a"](h) + self.heads["b"](h)
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("held49"), {"held.py": HELD}, "*")


@pytest.mark.parametrize("name", ["held.py:ListStack", "held.py:DictHeads"])
def test_modules_in_a_plain_list_or_dict_are_proven_with_torchs_weights(proven, name):
    model = proven[name]
    assert model["status"] == "proven", model


def test_torch_side_hands_the_held_members_tensors_under_their_paths():
    import torch

    from mindport.validators.parity.side_torch import TorchSide

    namespace: dict = {}
    exec(compile(textwrap.dedent(HELD), "held.py", "exec"), namespace)  # noqa: S102 - our own fixture
    torch.manual_seed(0)
    model = namespace["DictHeads"]()
    state = TorchSide(model).state()
    assert not any("heads" in k or "blocks" in k for k in model.state_dict())
    assert {"heads.a.weight", "heads.b.2.bias", "body.blocks.1.conv.weight", "body.inp.weight"} <= set(state)
    np.testing.assert_array_equal(state["body.blocks.1.gate.weight"], model.body.blocks[1].gate.weight.detach().numpy())


def test_a_checkpoint_without_them_says_so(tmp_path):
    """A user's checkpoint is torch's state_dict: it never has the held members. The transfer is complete for what
    torch saves, and each member left at its own init is named in a warning."""
    import torch

    from mindport import convert_source, transfer_weights
    from tests.converter.port_check import load_module

    t_mod = load_module(textwrap.dedent(HELD), tmp_path / "t_held49.py", "t_held49")
    m_mod = load_module(convert_source(textwrap.dedent(HELD)).code, tmp_path / "m_held49.py", "m_held49")
    torch.manual_seed(0)
    report = transfer_weights(t_mod.DictHeads().state_dict(), m_mod.DictHeads())
    assert report.ok
    warned = {d.api for d in report.diagnostics if d.code == "MP301" and d.severity == "warning"}
    assert warned == {"heads.a", "heads.b", "body.blocks.0", "body.blocks.1"}, report.diagnostics
