"""Issue 30: ``nn.ModuleList(blocks)`` of a local Python list of Cells (S4's Sashimi: ``d_layers = []``, filled by
``d_layers.append(s4_block(H))`` where ``s4_block`` is a function of ``__init__`` returning a block, ``u_layers.
append(nn.ModuleList(block))``; latent-diffusion's FirstStagePostProcessor: ``self.model = nn.ModuleList(blocks)``)
is MindSpore's own CellList (native_facts.listed_cells): CellList takes a list of Cells as torch's ModuleList does,
and names the members when the owner assigns it. Proven against torch: parameter names (torch's state_dict keys),
outputs in PyNative and GRAPH_MODE; a list that may hold something else keeps the runtime ModuleList (and torch's
meaning)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, d, scale):
            super().__init__()
            self.fc = nn.Linear(d, d)
            self.scale = scale

        def forward(self, x):
            return torch.relu(self.fc(x)) * self.scale + x


    class Down(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.proj = nn.Linear(d_in, d_out)

        def forward(self, x):
            return self.proj(x)


    class Net(nn.Module):
        def __init__(self, dim=4, depth=2, expand=2):
            super().__init__()

            def block(d, i):
                inner = Block(d, 0.5 + i)
                return inner

            downs = []
            d = dim
            for i in range(depth):
                downs.append(block(d, i))
                downs.append(Down(d, d * expand))
                d *= expand
            centre = [block(d, 0) for _ in range(depth)]
            ups = []
            for i in range(depth):
                stage = [Down(d, d // expand)]
                d //= expand
                stage.append(block(d, i))
                stage.insert(0, nn.Identity())
                ups.append(nn.ModuleList(stage))
            self.n_down = len(downs)
            self.downs = nn.ModuleList(downs)
            self.centre = nn.ModuleList(centre)
            self.ups = nn.ModuleList(ups)
            self.out = nn.Linear(d, 3)

        def forward(self, x):
            for layer in self.downs:
                x = layer(x)
            for layer in self.centre:
                x = layer(x)
            for ident, down, blk in self.ups:
                x = blk(down(ident(x)))
            return self.out(x)
""")


def test_a_local_list_of_cells_is_a_cell_list_with_torchs_parameter_names(tmp_path):
    import torch
    code = convert_source(SOURCE).code
    assert "mp_containers" not in code and "mindport" not in code, code
    for line in ("self.downs = nn.CellList(downs)", "self.centre = nn.CellList(centre)",
                 "self.ups = nn.CellList(ups)", "ups.append(nn.CellList(stage))"):
        assert line in code, code
    net = load_module(code, tmp_path / "m_listed.py", "m_listed").Net()
    names = [p.name for p in net.get_parameters()]
    torch_net = load_module(SOURCE, tmp_path / "t_listed.py", "t_listed").Net()
    assert sorted(names) == sorted(torch_net.state_dict()), (names, list(torch_net.state_dict()))
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_local_list_of_cells_matches_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, f"listed_{mode}", mode, atol=1e-5)


@pytest.mark.parametrize("fill", [
    # a member that may be None (torch keeps it, CellList refuses it)
    "layers = [nn.Linear(4, 4), None if skip else nn.Linear(4, 4)]",
    # handed to a function that may put anything in it
    "layers = [nn.Linear(4, 4)]\n        more(layers)",
    # a member from a parameter of unknown kind
    "layers = [nn.Linear(4, 4)]\n        layers.append(extra)",
    # rebound by +=
    "layers = [nn.Linear(4, 4)]\n        layers += [extra]",
    # read by a nested function
    "layers = [nn.Linear(4, 4)]\n        grow = lambda: layers.append(extra)\n        grow()",
])
def test_lists_that_may_hold_other_values_keep_the_runtime_module_list(fill, tmp_path):
    source = textwrap.dedent("""
        import torch.nn as nn


        def more(items):
            items.append(nn.Identity())


        class Net(nn.Module):
            def __init__(self, skip=True, extra=None):
                super().__init__()
                FILL
                self.layers = nn.ModuleList(layers)

            def forward(self, x):
                for m in self.layers:
                    if m is not None:
                        x = m(x)
                return x
    """).replace("FILL", fill)
    code = convert_source(source).code
    assert "mp_containers.ModuleList(layers)" in code, code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, f"kept_{abs(hash(fill))}", "pynative", atol=1e-5)


def test_a_list_its_owner_adds_to_later_keeps_the_runtime_module_list():
    """CellList would name a member appended after the owner holds it by its old members' prefix."""
    source = textwrap.dedent("""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                layers = [nn.Linear(4, 4)]
                self.layers = nn.ModuleList(layers)
                self.layers.append(nn.Linear(4, 4))

            def forward(self, x):
                for m in self.layers:
                    x = m(x)
                return x
    """)
    code = convert_source(source).code
    assert "mp_containers.ModuleList(layers)" in code, code


CHOSEN_SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Full(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return torch.relu(self.fc(x))


    class Linear2(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.a = nn.Linear(d, d)
            self.b = nn.Linear(d, d, bias=False)

        def forward(self, x):
            return self.b(self.a(x)) - x


    class Net(nn.Module):
        def __init__(self, dim=4, full=(True, False, True)):
            super().__init__()
            downs = nn.ModuleList([])
            for use_full in full:
                klass = Full if use_full else Linear2
                downs.append(nn.ModuleList([klass(dim), nn.Linear(dim, dim)]))
            self.downs = downs

        def forward(self, x):
            for attn, proj in self.downs:
                x = proj(attn(x)) + x
            return x
""")


def test_a_member_built_by_a_chosen_class_is_a_cell_list(tmp_path):
    """denoising-diffusion-pytorch's Unet: ``attn_klass = FullAttention if full else LinearAttention`` then
    ``downs.append(nn.ModuleList([..., attn_klass(dim_in, ...), ...]))``: every member a Cell, CellList's own."""
    import torch
    code = convert_source(CHOSEN_SOURCE).code
    assert "mp_containers" not in code and "mindport" not in code, code
    assert "downs.append(nn.CellList([klass(dim), nn.Dense(" in code, code
    net = load_module(code, tmp_path / "m_chosen.py", "m_chosen").Net()
    torch_net = load_module(CHOSEN_SOURCE, tmp_path / "t_chosen.py", "t_chosen").Net()
    assert sorted(p.name for p in net.get_parameters()) == sorted(torch_net.state_dict())


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_member_built_by_a_chosen_class_matches_torch(mode, tmp_path):
    code = convert_source(CHOSEN_SOURCE).code
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(CHOSEN_SOURCE, code, "Net", [x], tmp_path, f"chosen_{mode}", mode, atol=1e-5)


def test_a_name_bound_to_something_else_too_keeps_the_runtime_module_list():
    source = CHOSEN_SOURCE.replace("klass = Full if use_full else Linear2",
                                   "klass = Full if use_full else Linear2\n            if not use_full:\n"
                                   "                klass = lambda d: None")
    assert source.count("klass = ") == 2, source
    code = convert_source(source).code
    assert "downs.append(mp_containers.ModuleList([klass(dim)" in code, code


def test_a_local_shadowing_a_class_name_is_not_taken_for_the_class():
    """``Full = make(...)`` in the method shadows the file's class ``Full``: ``klass = Full if ... else Linear2``
    may give whatever ``make`` returns (None here, which torch's ModuleList keeps)."""
    source = CHOSEN_SOURCE.replace("        downs = nn.ModuleList([])",
                                   "        Full = make(dim)\n        downs = nn.ModuleList([])").replace(
        "class Net(nn.Module):", "def make(d):\n    return None\n\n\nclass Net(nn.Module):")
    assert source.count("make(") == 2, source
    code = convert_source(source).code
    assert "downs.append(mp_containers.ModuleList([klass(dim)" in code, code
