"""A ModuleList subclass with its own forward, called as a layer (dinov2's BlockChunk: chunks of blocks padded with
Identity, held in a ModuleList and each called on x). A static graph reads every CellList, a subclass too, as a tuple
of its members, so calling one failed to compile ("The object is not callable", MindSpore 2.10); the converter bases
such a class on mp_containers.ModuleListLayer (a SequentialCell, compiled as a Cell). The ports match torch in
PyNative and in GRAPH_MODE, with torch's state_dict names."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

CHUNKS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Chunk(nn.ModuleList):
        def forward(self, x):
            for block in self:
                x = block(x)
            return x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(4)]
            self.blocks = nn.ModuleList([Chunk([nn.Identity()] * i + layers[i:i + 2]) for i in range(0, 4, 2)])
            self.head = Chunk([nn.Linear(4, 3)])

        def forward(self, x):
            for chunk in self.blocks:
                x = chunk(x)
            return self.head(x) * len(self.blocks[1])
""")


def test_called_list_based_on_module_list_layer():
    code = convert_source(CHUNKS).code
    assert "class Chunk(mp_containers.ModuleListLayer):" in code


def test_called_list_keeps_torch_names(tmp_path):
    from tests.source_module import load_source

    ms_net = load_source(convert_source(CHUNKS).code, tmp_path, "chunks49_names").Net()
    torch_names = set(load_source(CHUNKS, tmp_path, "chunks49_torch").Net().state_dict())
    ms_names = {p.name for p in ms_net.get_parameters()}
    assert torch_names == {"blocks.0.0.0.weight", "blocks.0.0.0.bias", "blocks.0.1.0.weight", "blocks.0.1.0.bias",
                           "blocks.1.2.0.weight", "blocks.1.2.0.bias", "blocks.1.3.0.weight", "blocks.1.3.0.bias",
                           "head.0.weight", "head.0.bias"}
    assert ms_names == torch_names, sorted(ms_names ^ torch_names)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_called_list_matches(tmp_path, mode):
    code = convert_source(CHUNKS).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(CHUNKS, code, "Net", [x], tmp_path, "chunks49", mode, atol=1e-6)
