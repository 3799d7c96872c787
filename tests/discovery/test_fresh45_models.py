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


# a project class named as one of torch's layers in one file (a factorisation machine's ``Linear`` reading its first
# two arguments as lists of feature columns), a model in another file calling torch's ``nn.Linear``; two project
# classes of one name in two files (``Block``), the model handing its width to its own file's
NAMESAKES = {
    "fm/a_layers.py": '''
        import torch
        from torch import nn


        class Linear(nn.Module):
            def __init__(self, dense_columns, sparse_columns):
                super().__init__()
                self.weights = nn.ParameterList([nn.Parameter(torch.ones(1)) for _ in dense_columns])
                self.names = [c for c in sparse_columns]

            def forward(self, x):
                return x * sum(self.weights)


        class Block(nn.Module):
            def __init__(self, widths):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(w, w) for w in widths])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
    ''',
    "nets/b_head.py": '''
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.fc = nn.Linear(width, width // 2)

            def forward(self, x):
                return torch.relu(self.fc(x))


        class Head(nn.Module):
            def __init__(self, in_dim, hidden, num_classes):
                super().__init__()
                self.block = Block(hidden)
                self.inp = nn.Linear(in_dim, hidden)
                self.out = nn.Linear(hidden // 2, num_classes)

            def forward(self, x):
                return self.out(self.block(self.inp(x)))


        class Wrapper(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.block = Block(width)

            def forward(self, x):
                return self.block(x) * 2
    ''',
}


@pytest.fixture(scope="module")
def namesakes(tmp_path_factory):
    return prove_files(tmp_path_factory.mktemp("fresh45n"), NAMESAKES, "nets/b_head.py:*")


def test_sizes_handed_to_torch_layers_and_own_blocks_are_not_a_namesake_s_lists(namesakes):
    """kathrinse/TabSurvey: DANet(input_dim, num_classes, layer_num, base_outdim, ...) hands ``num_classes`` and
    ``base_outdim`` to ``nn.Linear``; the repository's deepfm_lib defines ``class Linear`` reading its arguments as
    lists, and hand-ons resolved by the bare name took its use: DANet was tried with ``num_classes=[8, 16],
    base_outdim=[8, 16]`` only ("unsupported operand type(s) for //: 'list' and 'int'"), and so was its BasicBlock
    at the call DANet makes (2 of the 15 tried unbuilt). A call spelled through torch reaches no project class; a
    bare name reaches its own file's class first."""
    head = namesakes["nets/b_head.py:Head"]
    assert head["status"] == "proven", head
    assert "[" not in head["ctor"], head["ctor"]
    wrapper = namesakes["nets/b_head.py:Wrapper"]
    assert wrapper["status"] == "proven", wrapper
    assert "[" not in wrapper["ctor"], wrapper["ctor"]


# a network module importing its layers from the project's layers module, which imports a package not installed
# here (torch_sparse's spmm, a stand-in): the network fails on what the stand-in gives back
STANDING_IN = {
    "src/layers45.py": '''
        import torch
        from missing_sparse45 import spmm


        class SparseLayer(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
                self.weight = torch.nn.Parameter(torch.ones(width, width))

            def forward(self, x):
                return spmm(x, self.weight)
    ''',
    "src/networks45.py": '''
        import torch
        from layers45 import SparseLayer


        class Network(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
                self.layer = SparseLayer(width)
                self.head = torch.nn.Linear(width, 2)

            def forward(self, x):
                return self.head(self.layer(x))
    ''',
}


def test_a_not_built_reason_names_the_packages_the_projects_modules_it_imports_miss(tmp_path):
    """benedekrozemberczki/MixHop-and-N-GCN: trainer_and_networks.py's NGCNNetwork and MixHopNetwork build their
    layers from layers.py, which imports ``torch_sparse.spmm`` (not installed: a stand-in); their reasons said
    "IndexError: too many indices for tensor of dimension 2" only, the layer's own named torch_sparse. The note names
    the stand-ins of the project modules the model's module imports too."""
    results = prove_files(tmp_path, STANDING_IN, "src/networks45.py:*")
    model = results["src/networks45.py:Network"]
    assert model["status"] == "not-built", model
    assert model["reason"].endswith("(its module imports packages not installed here, given stand-ins: "
                                    "missing_sparse45)"), model["reason"]
    assert model["stubbed"] == ["missing_sparse45"], model


# a tabular block whose forward first masks its B x D input through einsum with a learned mask (``'nd,bd->bnd'``),
# then hands the k masked copies to a grouped 1-D convolution: the first layer's forms are the convolution's (B x k*D
# x L), of a rank the einsum refuses
MASKED = '''
import torch
import torch.nn as nn


class MaskedGroups(nn.Module):
    def __init__(self, input_dim, k, out_dim):
        super().__init__()
        self.mask = nn.Parameter(torch.rand(k, input_dim))
        self.k = k
        self.fc = nn.Conv1d(input_dim * k, out_dim * k, kernel_size=1, groups=k)

    def forward(self, x):
        b = x.size(0)
        x = torch.einsum("nd,bd->bnd", torch.sigmoid(self.mask), x)
        x = self.fc(x.reshape(b, -1, 1))
        return torch.relu(x.squeeze(-1))
'''


def test_an_input_an_einsum_takes_first_gets_the_rank_its_equation_names(tmp_path):
    """kathrinse/TabSurvey's danet_lib DANet and BasicBlock: the input is masked by ``torch.einsum('nd,bd->bnd',
    mask, x)`` before a grouped Conv1d; every form tried was the convolution's, 2 x 48 x 32 ...: "einsum(): the number
    of subscripts in the equation (2) does not match the number of dimensions (3) for operand 1 and no ellipsis was
    given". The equation's subscripts are the input's rank."""
    results = prove_files(tmp_path, {"masked.py": MASKED}, "*")
    model = results["masked.py:MaskedGroups"]
    assert model["status"] == "proven", model
    assert len(model["inputs"][0].split(":")[0].split("x")) == 2, model["inputs"]
