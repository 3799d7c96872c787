"""First contact, batch 15 (session 45): classes of failure met on repositories no corpus of ours named, each as a
fixture of our own proven by ``prove_models`` with real torch and real MindSpore (PyNative and GRAPH_MODE)."""
from __future__ import annotations

import re

import pytest

from tests.discovery._prove import prove_files

# a second argument joined to what the model made of its first, after one or more of its layers: a DDPG critic's
# action entering at its second Linear (``cat([relu(l1(x)), a], 1)`` before ``Linear(400 + action_dim, 300)``), an
# action joined after two layers of a state encoder
LATE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class LateCritic(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.l1 = nn.Linear(obs_dim, 40)
        self.l2 = nn.Linear(40 + action_dim, 24)
        self.l3 = nn.Linear(24, 1)

    def forward(self, x, a):
        h = F.relu(self.l1(x))
        h = F.relu(self.l2(torch.cat([h, a], 1)))
        return self.l3(h)


class StepModel(nn.Module):
    def __init__(self, state_size, action_size, width=24):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(state_size, width), nn.Tanh(), nn.Linear(width, 12), nn.Tanh())
        self.out = nn.Linear(12 + action_size, 3)

    def forward(self, s, a):
        return self.out(torch.cat((self.enc(s), a), dim=-1))
'''


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh45"), {"late.py": LATE}, "*")


@pytest.mark.parametrize("name, size", [("late.py:LateCritic", "action_dim"), ("late.py:StepModel", "action_size")])
def test_an_argument_joined_after_the_first_layers_takes_the_width_the_next_layer_leaves(proven, name, size):
    """cyoon1729/Policy-Gradient-Methods' DDPG Critic(obs_dim, action_dim): ``cat([relu(linear1(x)), a], 1)`` before
    ``Linear(1024 + action_dim, 512)``; ``a`` given 2 wide: "mat1 and mat2 shapes cannot be multiplied (2x1026 and
    1040x512)", every form tried failing alike (2 of the repository's 15 tried left unbuilt). The argument the layer
    was not handed directly takes the width its complaint leaves missing (2 + 14 = 16 here)."""
    model = proven[name]
    assert model["status"] == "proven", model
    wanted = re.search(rf"\b{size}=(\d+)", model["ctor"])
    assert wanted is not None, model["ctor"]
    assert model["inputs"][1].split(":")[0].split("x")[-1] == wanted.group(1), (model["ctor"], model["inputs"])

