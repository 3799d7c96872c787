"""A slice of a Sequential/ModuleList taken in ``forward`` compiles in GRAPH_MODE and leaves the parameter names alone.

MindSpore's ``SequentialCell``/``CellList`` slices build a new container whose constructor renamed the shared
parameters after their new position (``out_layers.3.weight`` -> ``3.weight``): two blocks' parameters then had one
name and GRAPH_MODE refused the model ("its name '3.weight' already exists": guided-diffusion's and
improved-diffusion's UNets, ``out_rest = self.out_layers[1:]`` in every ResBlock), and in PyNative the model's
parameters stayed renamed after a call (a checkpoint saved then misses them). ``mindport.runtime.container_slices``
keeps the names. The surface: torch's Sequential and ModuleList slices (``[a:]``, ``[:-b]``, ``[::k]``, negative
starts), of the containers and of a Sequential subclass (TimestepEmbedSequential's shape), in a list of them.
Expected values are torch's own outputs; both modes run (a graph compile of this small net takes a few seconds)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode, load_module

SLICES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, ch):
            super().__init__()
            self.layers = nn.Sequential(nn.GroupNorm(2, ch), nn.SiLU(), nn.Dropout(0.0),
                                        nn.Conv2d(ch, ch, 3, padding=1))
            self.emb = nn.Linear(6, 2 * ch)

        def forward(self, x, emb):
            norm, rest = self.layers[0], self.layers[1:]
            scale, shift = self.emb(emb)[:, :, None, None].chunk(2, dim=1)
            return x + rest(norm(x) * (1 + scale) + shift)


    class EmbedSequential(nn.Sequential):
        def forward(self, x, emb):
            for layer in self:
                x = layer(x, emb) if isinstance(layer, Block) else layer(x)
            return x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([EmbedSequential(nn.Conv2d(3, 4, 3, padding=1))])
            for _ in range(3):
                self.blocks.append(EmbedSequential(Block(4), nn.Conv2d(4, 4, 1)))
            self.tail = nn.Sequential(nn.Conv2d(4, 4, 1), nn.ReLU(), nn.Conv2d(4, 4, 1), nn.ReLU())

        def forward(self, x, emb):
            h = self.blocks[0](x, emb)
            for block in self.blocks[1:]:
                h = block(h, emb)
            for block in self.blocks[-2:]:
                h = self.blocks[2][:1](h, emb) + block[1:](h, emb)
            return self.tail[::2](h), self.tail[:-1](h)
""")


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((2, 3, 6, 6)).astype(np.float32), rng.standard_normal((2, 6)).astype(np.float32)]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_slices_in_forward_match_torch(tmp_path, mode):
    code = convert_source(SLICES).code
    assert_port_matches_in_mode(SLICES, code, "Net", _inputs(), tmp_path, "slices", mode, atol=1e-5)


def test_slices_leave_the_parameter_names(tmp_path):
    """After a PyNative call the names are still the parameters' paths, torch's state_dict keys (GroupNorm's
    weight/bias are MindSpore's gamma/beta)."""
    import mindspore as ms
    import torch

    code = convert_source(SLICES).code
    net = load_module(code, tmp_path / "m_names.py", "m_names").Net()
    before = [p.name for p in net.get_parameters()]
    assert len(set(before)) == len(before)
    net(*(ms.Tensor(x) for x in _inputs()))
    assert [p.name for p in net.get_parameters()] == before
    torch_keys = load_module(SLICES, tmp_path / "t_names.py", "t_names").Net().state_dict().keys()
    renamed = {k.replace("layers.0.weight", "layers.0.gamma").replace("layers.0.bias", "layers.0.beta")
               for k in torch_keys}
    assert set(before) == renamed
    del torch


def test_the_converted_file_loads_the_names_keeping_slices():
    """A file that uses no other runtime module imports ``mindport.runtime.container_slices`` when it slices a
    container it builds; one that slices only tensors does not."""
    plain = SLICES.replace("nn.GroupNorm(2, ch), ", "").replace("nn.Dropout(0.0),", "")
    code = convert_source(plain).code
    assert "import mindport.runtime.container_slices" in code
    tensors = textwrap.dedent("""\
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

            def forward(self, x):
                return self.body(x)[:, 1:]
    """)
    assert "mindport" not in convert_source(tensors).code
