"""Issue 30 (native53): ``nn.ModuleList([embed, norm, layers])`` whose members are local names of the method, each
bound only to a Cell construction (``embed = nn.Conv2d(...)``, ``layers = nn.ModuleList([])`` filled by
``layers.append(...)``) and read nowhere else, is MindSpore's own CellList (native_facts.named_cells; segformer's MiT
stages ``stages.append(nn.ModuleList([get_overlap_patches, overlap_patch_embed, layers]))``): no member can be None,
which is what the runtime ModuleList was kept for. Proven against torch: parameter names (torch's state_dict keys),
outputs in PyNative and GRAPH_MODE; a name that may be None, or that another holder shares, keeps the runtime's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, dims=(3, 4, 6)):
            super().__init__()
            stages = nn.ModuleList([])
            for dim_in, dim_out in zip(dims[:-1], dims[1:]):
                embed = nn.Conv2d(dim_in, dim_out, 1)
                norm = nn.BatchNorm2d(dim_out)
                layers = nn.ModuleList([])
                for _ in range(2):
                    layers.append(nn.ModuleList([nn.Conv2d(dim_out, dim_out, 1), nn.Conv2d(dim_out, dim_out, 3, padding=1)]))
                stages.append(nn.ModuleList([embed, norm, layers]))
            self.stages = stages

        def forward(self, x):
            for (embed, norm, layers) in self.stages:
                x = norm(embed(x))
                for (a, b) in layers:
                    x = torch.relu(a(x)) + x
                    x = b(x) + x
            return x
""")


def test_a_display_of_local_cells_is_a_cell_list_with_torchs_parameter_names(tmp_path):
    code = convert_source(SOURCE).code
    assert "stages.append(nn.CellList([embed, norm, layers]))" in code, code
    assert "mp_containers" not in code, code
    net = load_module(code, tmp_path / "m_named.py", "m_named").Net()
    names = sorted(p.name for p in net.get_parameters())
    torch_net = load_module(SOURCE, tmp_path / "t_named.py", "t_named").Net()
    # BatchNorm2d's (the member ``.1.`` of a stage) parameters and statistics by MindSpore's names
    bn = {".1.weight": ".1.gamma", ".1.bias": ".1.beta", ".1.running_mean": ".1.moving_mean",
          ".1.running_var": ".1.moving_variance"}
    expected = sorted(next((k[:-len(t)] + m for t, m in bn.items() if k.count(".") == 3 and k.endswith(t)), k)
                      for k in torch_net.state_dict() if not k.endswith("num_batches_tracked"))
    assert names == expected, (names, expected)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_display_of_local_cells_matches_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, f"named_{mode}", mode, atol=1e-5)


@pytest.mark.parametrize("binding", [
    "norm = nn.BatchNorm2d(dim_out) if dim_out > 4 else None",   # may be None: CellList refuses it
    "norm = nn.BatchNorm2d(dim_out)\n            self.norm = norm",  # shared with another holder
])
def test_a_name_that_may_be_none_or_shared_keeps_the_runtime_module_list(binding):
    source = SOURCE.replace("norm = nn.BatchNorm2d(dim_out)", binding)
    code = convert_source(source).code
    assert "stages.append(mp_containers.ModuleList([embed, norm, layers]))" in code, code
