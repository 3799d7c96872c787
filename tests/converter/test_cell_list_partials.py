"""Issue 30: two more ``nn.ModuleList`` forms are MindSpore's own ``nn.CellList``: members built by a module-level
``LinearNoBias = partial(nn.Linear, bias=False)`` (x-transformers' ``to_logits``: native_facts.FileFacts.partials,
read as the call of what it binds), and a generator expression of layer constructions (segment-anything's MLP,
``nn.ModuleList(nn.Linear(n, k) for n, k in zip(...))``: ModuleList consumes it when built, CellList is given the
same elements as a list comprehension). Before: ``mp_containers.ModuleList``. Proven against torch: parameter names
(torch's state_dict keys) and outputs in PyNative and GRAPH_MODE; a partial of something else and a generator of
names that may be None keep the runtime list."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    from functools import partial

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    LinearNoBias = partial(nn.Linear, bias=False)


    class Net(nn.Module):
        def __init__(self, dim=4, heads=2, hidden=(4, 6, 4)):
            super().__init__()
            h = list(hidden)
            self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([dim] + h, h + [dim]))
            self.to_logits = nn.ModuleList([LinearNoBias(dim, 3) for _ in range(heads)])

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = F.relu(layer(x)) if i < len(self.layers) - 1 else layer(x)
            return tuple(fn(x) for fn in self.to_logits)
""")

NEGATIVE = textwrap.dedent("""
    from functools import partial

    import torch
    import torch.nn as nn

    make = partial(print, end="")


    class Net(nn.Module):
        def __init__(self, dim=4, extra=None):
            super().__init__()
            self.others = nn.ModuleList([make(dim) for _ in range(2)])
            self.maybe = nn.ModuleList(m for m in (extra, extra))
""")


def test_partial_and_generator_lists_are_native_with_torchs_parameter_names(tmp_path):
    code = convert_source(SOURCE).code
    assert "mp_containers" not in code, code
    assert "self.layers = nn.CellList([nn.Dense(" in code and "for n, k in zip([dim] + h, h + [dim])])" in code, code
    assert "self.to_logits = nn.CellList([LinearNoBias(dim, 3) for _ in range(heads)])" in code, code
    net = load_module(code, tmp_path / "m_clp.py", "m_clp").Net()
    names = [p.name for p in net.get_parameters()]
    torch_net = load_module(SOURCE, tmp_path / "t_clp.py", "t_clp").Net()
    assert sorted(names) == sorted(torch_net.state_dict()), (names, list(torch_net.state_dict()))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_partial_and_generator_lists_match_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "cellpartials", mode, atol=1e-5)


def test_other_partials_and_generators_keep_the_runtime_list():
    code = convert_source(NEGATIVE).code
    assert "self.others = mp_containers.ModuleList(" in code, code
    assert "self.maybe = mp_containers.ModuleList(" in code, code


# denoising-diffusion-pytorch's Unet: the blocks are local partials of the file's classes, one chosen per stage
LOCAL_SOURCE = textwrap.dedent("""
    from functools import partial

    import torch
    from torch import nn
    from torch.nn import Module, ModuleList


    def Downsample(dim, dim_out=None):
        return nn.Sequential(nn.Conv2d(dim, dim_out or dim, 3, stride=2, padding=1))


    class Block(Module):
        def __init__(self, dim, dim_out, emb=2):
            super().__init__()
            self.conv = nn.Conv2d(dim, dim_out, 1)
            self.emb = emb

        def forward(self, x):
            return torch.relu(self.conv(x)) * self.emb


    class Attention(Module):
        def __init__(self, dim, heads=2, flash=False):
            super().__init__()
            self.to_out = nn.Conv2d(dim, dim, 1)

        def forward(self, x):
            return self.to_out(x).softmax(1) * x


    class LinearAttention(Attention):
        pass


    class Unet(Module):
        def __init__(self, dim=4, full_attn=(False, True)):
            super().__init__()
            FullAttention = partial(Attention, flash=False)
            block = partial(Block, emb=3)
            self.downs = ModuleList([])
            self.ups = ModuleList([])
            n = len(full_attn)
            for ind, layer_full_attn in enumerate(full_attn):
                is_last = ind >= (n - 1)
                attn_klass = FullAttention if layer_full_attn else LinearAttention
                self.downs.append(ModuleList([
                    block(dim, dim),
                    attn_klass(dim, heads=2),
                    Downsample(dim, dim) if not is_last else nn.Conv2d(dim, dim, 3, padding=1),
                ]))
            for ind, layer_full_attn in enumerate(reversed(full_attn)):
                attn_klass = FullAttention if layer_full_attn else LinearAttention
                self.ups.append(ModuleList([block(dim, dim), attn_klass(dim)]))

        def forward(self, x):
            for b, attn, down in self.downs:
                x = down(attn(b(x)))
            for b, attn in self.ups:
                x = attn(b(x))
            return x
""")

LOCAL_NEGATIVE = LOCAL_SOURCE.replace("block = partial(Block, emb=3)", "block = partial(print, end='')")


def test_local_partials_of_classes_are_cell_list_members(tmp_path):
    code = convert_source(LOCAL_SOURCE).code
    assert "mp_containers" not in code, code
    assert "downs.append(nn.CellList([" in code and "ups.append(nn.CellList([" in code, code
    net = load_module(code, tmp_path / "m_clpl.py", "m_clpl").Unet()
    names = [p.name for p in net.get_parameters()]
    torch_net = load_module(LOCAL_SOURCE, tmp_path / "t_clpl.py", "t_clpl").Unet()
    assert sorted(names) == sorted(torch_net.state_dict()), (names, list(torch_net.state_dict()))
    assert "downs.append(mp_containers.ModuleList([" in convert_source(LOCAL_NEGATIVE).code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_local_partials_of_classes_match_torch(mode, tmp_path):
    code = convert_source(LOCAL_SOURCE).code
    x = np.random.default_rng(1).standard_normal((1, 4, 8, 8)).astype(np.float32)
    assert_port_matches_in_mode(LOCAL_SOURCE, code, "Unet", [x], tmp_path, "celllocalpartials", mode, atol=1e-5)
