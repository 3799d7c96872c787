"""Native ports, session 37 (a native uniform fill of a new tensor was tried and reverted: ops.rand_like draws the
tracker's shared stream where torch's in-place fill draws its own generator, tests/training/test_train21_causes.py)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import load_module


# * ``blocks.insert(0, block)`` / ``blocks.extend([...])`` on a ModuleList (DDIM's ``up.insert(0, up_block)``): the
#   CellList's own method (the runtime mindport.runtime.layers.insert/extend calls it on a CellList), parameter names
#   renumbered as torch's keys; a Sequential's insert and a ModuleList's pop keep the runtime's (SequentialCell has no
#   insert, CellList no pop).
CONTAINERS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            up = nn.ModuleList()
            for i in range(3):
                block = nn.Module()
                block.lin = nn.Linear(4, 4)
                up.insert(0, block)
            self.up = up
            self.more = nn.ModuleList([nn.Linear(4, 4)])
            self.more.extend([nn.Linear(4, 4), nn.ReLU()])
            self.more.insert(1, nn.Linear(4, 4))
            self.seq = nn.Sequential(nn.Linear(4, 4))
            self.seq.insert(0, nn.ReLU())

        def forward(self, x):
            for block in self.up:
                x = block.lin(x)
            for layer in self.more:
                x = layer(x)
            return self.seq(x)
""")


def test_module_list_insert_and_extend_are_the_cell_lists_own():
    code = convert_source(CONTAINERS).code
    assert "up.insert(0, block)" in code and "more.insert(1, " in code and "more.extend([" in code, code
    assert "mp_nn.insert(self.seq, 0, nn.ReLU())" in code, code  # SequentialCell: no insert of its own
    assert code.count("mp_nn.") == 1, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_module_list_insert_and_extend_match_torch(mode, tmp_path):
    from tests.converter.port_check import assert_port_matches_in_mode

    code = convert_source(CONTAINERS).code
    ms_net = load_module(code, tmp_path / "m_names.py", "m_names").Stack()
    torch_net = load_module(CONTAINERS, tmp_path / "t_names.py", "t_names").Stack()
    names = sorted(p.name for p in ms_net.get_parameters())
    want = sorted(torch_net.state_dict())
    assert names == want, (names, want)  # Dense's weight/bias keep torch's names: the same keys, renumbered alike
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(CONTAINERS, code, "Stack", [x], tmp_path, "containers", mode)


# * ``(rel_pos * torch.tensor([2 * w - 1, 1])).sum(dim=-1)`` (MaxViT's, CrossFormer's relative-position indices): the
#   broadcast with a 1-D tensor of two elements has a last extent of 2, never empty, so the sum over dim=-1 is
#   MindSpore's own ``ops.sum`` (native_facts.nonempty_last_extent); other dims, data without a number literal, a
#   one-element display keep the runtime sum (torch's 0 over an empty extent).
INDICES = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Indices(nn.Module):
        def __init__(self, w=3):
            super().__init__()
            self.w = w
            pos = torch.arange(w)
            grid = torch.stack(torch.meshgrid(pos, pos, indexing="ij")).permute(1, 2, 0).reshape(w * w, 2)
            rel_pos = grid[:, None] - grid[None, :]
            rel_pos += w - 1
            self.register_buffer("rel_pos_indices", (rel_pos * torch.tensor([2 * w - 1, 1])).sum(dim=-1),
                                 persistent=False)

        def forward(self, x):
            scaled = torch.sum(x * torch.tensor([2.0 * self.w - 1, 0.5]), dim=-1)
            empty = (x[:, :0] * torch.tensor([self.w])).sum(-1)
            return self.rel_pos_indices, scaled, empty
""")


def test_sum_over_a_broadcast_with_a_literal_vector_is_ops_sum():
    code = convert_source(INDICES).code
    assert "ops.sum((rel_pos * mp_tensor.tensor([2 * w - 1, 1])), dim=-1)" in code, code
    assert "scaled = ops.sum(x * mp_tensor.tensor([2.0 * self.w - 1, 0.5]), dim=-1)" in code, code
    assert "empty = mp_math.sum(" in code, code  # one element: the broadcast's last extent is x's, empty here


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sum_over_a_broadcast_with_a_literal_vector_matches_torch(mode, tmp_path):
    from tests.converter.port_check import assert_port_matches_in_mode

    code = convert_source(INDICES).code
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    assert_port_matches_in_mode(INDICES, code, "Indices", [x], tmp_path, "indices", mode)
