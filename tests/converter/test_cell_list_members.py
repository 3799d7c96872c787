"""Issue 30: more ``nn.ModuleList`` forms are MindSpore's own ``nn.CellList``: a member that is a conditional
expression of two layer constructions (``Downsample(...) if not last else nn.Identity()``, vit-pytorch's NesT,
RegionViT, Twins-SVT), a construction wrapped in torch's weight or spectral norm (``weight_norm(nn.Conv1d(...))``,
HiFi-GAN: they return the module they are given), and an annotated assignment (``self.blocks: Iterable[Block] =
nn.ModuleList([...])``, whisper). Before: ``mp_containers.ModuleList``. Proven against torch: parameter names (as
torch's state_dict keys) and outputs in PyNative and GRAPH_MODE; a member that may be None keeps the runtime list."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    from typing import Iterable

    import torch
    import torch.nn as nn
    from torch.nn.utils import weight_norm


    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return torch.relu(self.fc(x))


    class Net(nn.Module):
        def __init__(self, dim=4, depth=3):
            super().__init__()
            self.blocks: Iterable[Block] = nn.ModuleList([Block(dim) for _ in range(depth)])
            self.convs = nn.ModuleList([
                weight_norm(nn.Conv1d(dim, dim, 3, padding=1)),
                weight_norm(nn.Conv1d(dim, dim, 3, padding=1)),
            ])
            layers = nn.ModuleList([])
            for i in range(depth):
                last = i == depth - 1
                layers.append(nn.ModuleList([
                    Block(dim),
                    nn.Linear(dim, dim) if not last else nn.Identity(),
                ]))
            self.layers = layers

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            for a, f in self.layers:
                x = f(a(x)) + x
            y = x.unsqueeze(-1).expand(-1, -1, 5)
            for c in self.convs:
                y = c(y)
            return y
""")


def test_cell_list_members_are_native_with_torchs_parameter_names(tmp_path):
    import torch
    code = convert_source(SOURCE).code
    assert "mp_containers" not in code, code
    assert "self.blocks: Iterable[Block] = nn.CellList(" in code and "self.convs = nn.CellList(" in code, code
    assert "layers.append(nn.CellList(" in code, code
    net = load_module(code, tmp_path / "m_cl.py", "m_cl").Net()
    names = [p.name for p in net.get_parameters()]
    torch_net = load_module(SOURCE, tmp_path / "t_cl.py", "t_cl").Net()
    assert sorted(names) == sorted(torch_net.state_dict()), (names, list(torch_net.state_dict()))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_cell_list_members_match_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "cellmembers", mode, atol=1e-5)


def test_a_member_that_may_be_none_keeps_the_runtime_list():
    source = SOURCE.replace("nn.Linear(dim, dim) if not last else nn.Identity()", "nn.Linear(dim, dim) if not last else None")
    code = convert_source(source).code
    assert "layers.append(mp_containers.ModuleList(" in code, code


# nanoGPT / minGPT / nanochat: the blocks are a member of a ModuleDict
DICT_SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return torch.relu(self.fc(x))


    class Net(nn.Module):
        def __init__(self, dim=4, depth=3):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(10, dim),
                h=nn.ModuleList([Block(dim) for _ in range(depth)]),
                ln_f=nn.LayerNorm(dim),
            ))
            self.heads = nn.ModuleDict({"out": nn.ModuleList([nn.Linear(dim, 2) for _ in range(2)])})

        def forward(self, idx):
            x = self.transformer.wte(idx)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            return tuple(head(x) for head in self.heads.out)
""")


def test_a_dict_member_list_is_a_cell_list_with_torchs_parameter_names(tmp_path):
    code = convert_source(DICT_SOURCE).code
    assert "h=nn.CellList([Block(dim) for _ in range(depth)])" in code, code
    assert '"out": nn.CellList([nn.Dense(' in code, code
    net = load_module(code, tmp_path / "m_dl.py", "m_dl").Net()
    names = [p.name for p in net.get_parameters()]
    torch_net = load_module(DICT_SOURCE, tmp_path / "t_dl.py", "t_dl").Net()
    assert len(names) == len(torch_net.state_dict())
    rename = {"embedding_table": "weight", "gamma": "weight", "beta": "bias"}
    assert sorted(n.rsplit(".", 1)[0] + "." + rename.get(n.rsplit(".", 1)[1], n.rsplit(".", 1)[1]) for n in names) \
        == sorted(torch_net.state_dict()), (names, list(torch_net.state_dict()))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_dict_member_list_matches_torch(mode, tmp_path):
    code = convert_source(DICT_SOURCE).code
    idx = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)
    assert_port_matches_in_mode(DICT_SOURCE, code, "Net", [idx], tmp_path, "dictlist", mode, atol=1e-5)


@pytest.mark.parametrize("extra", [
    "self.transformer.h.append(Block(dim))",
    'self.transformer["h"].append(Block(dim))',
    "self.transformer.h[0] = Block(dim)",
])
def test_a_dict_member_list_added_to_keeps_the_runtime_list(extra):
    source = DICT_SOURCE.replace("        self.heads = ", f"        {extra}\n        self.heads = ")
    code = convert_source(source).code
    assert "h=mp_containers.ModuleList([Block(dim) for _ in range(depth)])" in code, code
