"""Issue 30: ``self.layers = nn.ModuleList([])`` filled by ``self.layers.append(...)`` in ``__init__`` (vit-pytorch's
Transformer) is MindSpore's own CellList, built in a local and assigned after the last add (native_facts.
hoisted_list): MindSpore names a member appended to a CellList its owner already holds without the owner's prefix
(``0.0.weight``), a list filled first and then assigned as torch does (``layers.0.0.weight``). Proven against torch:
parameter names (as torch's state_dict keys), outputs in PyNative and GRAPH_MODE; the cases the hoist could change
keep the runtime ModuleList."""
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
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return torch.relu(self.fc(x))


    class Net(nn.Module):
        def __init__(self, dim=4, depth=3):
            super().__init__()
            self.inp = nn.Linear(dim, dim)
            self.layers = nn.ModuleList([])
            for i in range(depth):
                self.layers.append(nn.ModuleList([
                    Block(dim),
                    nn.Linear(dim, dim, bias=i % 2 == 0)
                ]))
            self.extra = nn.ModuleList()
            self.extra.extend([nn.Linear(dim, dim), nn.Linear(dim, dim)])
            self.extra.insert(0, nn.Linear(dim, dim))
            self.out = nn.Linear(dim, 2)

        def forward(self, x):
            x = self.inp(x)
            for attn, ff in self.layers:
                x = attn(x) + x
                x = ff(x) + x
            for layer in self.extra:
                x = layer(x)
            return self.out(x)
""")


def test_hoisted_list_is_a_cell_list_with_torchs_parameter_names(tmp_path):
    import torch
    code = convert_source(SOURCE).code
    assert "mp_containers" not in code, code
    assert "        layers = nn.CellList([])" in code and "        self.layers = layers\n" in code, code
    assert "        extra = nn.CellList()" in code and "        self.extra = extra\n" in code, code
    net = load_module(code, tmp_path / "m_names.py", "m_names").Net()
    names = [p.name for p in net.get_parameters()]
    torch.manual_seed(0)
    torch_net = load_module(SOURCE, tmp_path / "t_names.py", "t_names").Net()
    assert sorted(names) == sorted(torch_net.state_dict()), (names, list(torch_net.state_dict()))
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_hoisted_list_matches_torch(mode, tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "hoist", mode, atol=1e-5)


@pytest.mark.parametrize("body", [
    # a method of the class called while the list is built (it may read self.layers)
    """
        self.layers = nn.ModuleList([])
        for _ in range(2):
            self.layers.append(nn.Linear(4, 4))
        self.count = self._count()
    """,
    # the list read in __init__ besides the adds
    """
        self.layers = nn.ModuleList([])
        self.layers.append(nn.Linear(4, 4))
        self.first = self.layers[0]
    """,
    # added to by name
    """
        self.layers = nn.ModuleList([])
        self.layers.add_module("a", nn.Linear(4, 4))
    """,
    # assigned inside a branch
    """
        if True:
            self.layers = nn.ModuleList([])
        self.layers.append(nn.Linear(4, 4))
    """,
])
def test_lists_the_hoist_could_change_keep_the_runtime_module_list(body):
    source = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
        + textwrap.indent(textwrap.dedent(body).strip("\n"), "        ") + "\n\n    def _count(self):\n" \
        "        return len(self.layers)\n\n    def forward(self, x):\n        for m in self.layers:\n" \
        "            x = m(x)\n        return x\n"
    code = convert_source(source).code
    assert "mp_containers.ModuleList" in code, code


def test_appended_from_another_method_keeps_the_runtime_module_list():
    source = textwrap.dedent("""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([])
                self.grow()

            def grow(self):
                self.layers.append(nn.Linear(4, 4))

            def forward(self, x):
                return self.layers[0](x)
    """)
    assert "mp_containers.ModuleList" in convert_source(source).code


def test_an_import_path_through_layers_is_not_a_foreign_read():
    """vit-pytorch imports ``from einops.layers.torch import Rearrange``: the module path's ``.layers`` is not a read
    of some object's ``layers`` attribute (FileFacts.foreign), so ``self.layers`` is still hoisted."""
    source = textwrap.dedent("""
        import torch.nn as nn
        from einops.layers.torch import Rearrange


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.flat = Rearrange("b c -> c b")
                self.layers = nn.ModuleList([])
                for _ in range(2):
                    self.layers.append(nn.Linear(4, 4))

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return self.flat(x)
    """)
    code = convert_source(source).code
    assert "        layers = nn.CellList([])" in code and "self.layers = layers" in code, code
    assert "mp_containers" not in code and "mindport" not in code, code


def test_classes_of_one_file_with_the_same_list_name_are_each_hoisted(tmp_path):
    """cross_vit: three classes each fill their own ``self.layers``; one class's adds are not another's."""
    source = textwrap.dedent("""
        import torch.nn as nn


        class A(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([])
                for _ in range(2):
                    self.layers.append(nn.Linear(4, 4))

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([])
                for _ in range(2):
                    self.layers.append(nn.ModuleList([A(), nn.Linear(4, 4)]))

            def forward(self, x):
                for a, b in self.layers:
                    x = b(a(x))
                return x
    """)
    code = convert_source(source).code
    assert code.count("        layers = nn.CellList([])") == 2 and code.count("self.layers = layers") == 2, code
    assert "mp_containers" not in code, code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, "two_classes", "pynative", atol=1e-5)
    import torch
    torch_net = load_module(source, tmp_path / "t_two.py", "t_two").Net()
    names = [p.name for p in load_module(code, tmp_path / "m_two.py", "m_two").Net().get_parameters()]
    assert sorted(names) == sorted(torch_net.state_dict()), names


READS_SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def init_weights(m):
        if isinstance(m, nn.Linear):
            m.weight.data.normal_(0.0, 0.5)


    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return torch.relu(self.fc(x)) + x


    class Plain(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d, bias=False)

        def forward(self, x):
            return self.fc(x)


    class Generator(nn.Module):
        def __init__(self, dim=4, n=3):
            super().__init__()
            self.ups = nn.ModuleList()
            for i in range(n):
                self.ups.append(nn.Linear(dim, dim))
            self.blocks = nn.ModuleList()
            block = Block if n > 1 else Plain
            for i in range(len(self.ups)):
                self.blocks.append(block(dim))
            self.count = len(self.blocks)
            self.ups.apply(init_weights)
            self.out = nn.Linear(dim, 2)

        def forward(self, x):
            for i in range(self.count):
                x = self.blocks[i](self.ups[i](x))
            return self.out(x)


    class Base(nn.Module):
        def __init__(self, dim=4, depth=2):
            super().__init__()
            self.input_blocks = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim))])
            for _ in range(depth):
                self.input_blocks.append(nn.Sequential(Block(dim), nn.Linear(dim, dim)))
            self.out = nn.Linear(dim, 2)

        def forward(self, x):
            for m in self.input_blocks:
                x = m(x)
            return self.out(x)


    class Child(Base):
        def forward(self, x):
            return super().forward(x * 2)
""")


def test_reads_of_the_list_and_a_subclassed_owner_are_hoisted_with_torchs_names(tmp_path):
    """HiFi-GAN's Generator reads ``len(self.ups)`` and calls ``self.ups.apply(init_weights)`` while building (and
    appends ``resblock(h, ch, k, d)`` of ``resblock = ResBlock1 if ... else ResBlock2``);
    improved-diffusion's UNetModel (subclassed by SuperResModel) starts its list with a Sequential: both are
    MindSpore's CellList built in a local, named as torch names them."""
    import torch
    code = convert_source(READS_SOURCE).code
    assert "mp_containers" not in code, code
    for line in ("        ups = nn.CellList()", "        blocks = nn.CellList()", "        self.ups = ups\n",
                 "        self.blocks = blocks\n", "        input_blocks = nn.CellList([", "self.input_blocks = input_blocks"):
        assert line in code, code
    module = load_module(code, tmp_path / "m_reads.py", "m_reads")
    torch_module = load_module(READS_SOURCE, tmp_path / "t_reads.py", "t_reads")
    for cls in ("Generator", "Base", "Child"):
        names = [p.name for p in getattr(module, cls)().get_parameters()]
        assert sorted(names) == sorted(getattr(torch_module, cls)().state_dict()), (cls, names)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls", ["Generator", "Child"])
def test_reads_of_the_list_and_a_subclassed_owner_match_torch(cls, mode, tmp_path):
    code = convert_source(READS_SOURCE).code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(READS_SOURCE, code, cls, [x], tmp_path, f"reads_{cls}_{mode}", mode, atol=1e-5)


@pytest.mark.parametrize("child", [
    # the subclass adds to the list after the base holds it
    """
    class Child(Base):
        def __init__(self):
            super().__init__()
            self.layers.append(nn.Linear(4, 4))
    """,
    # a method call after the assignment in the base: a subclass may override it to read the list
    """
    class Child(Base):
        def hook(self):
            return len(self.layers)
    """,
])
def test_subclassed_owners_the_hoist_could_change_keep_the_runtime_module_list(child):
    source = textwrap.dedent("""
        import torch.nn as nn


        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([])
                for _ in range(2):
                    self.layers.append(nn.Linear(4, 4))
                self.n = self.hook()

            def hook(self):
                return 0

            def forward(self, x):
                for m in self.layers:
                    x = m(x)
                return x
    """) + textwrap.dedent(child)
    code = convert_source(source).code
    assert "mp_containers.ModuleList([])" in code, code


def test_a_read_that_hands_the_list_on_keeps_the_runtime_module_list():
    source = textwrap.dedent("""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([])
                for _ in range(2):
                    self.layers.append(nn.Linear(4, 4))
                self.seq = nn.Sequential(*self.layers)

            def forward(self, x):
                return self.seq(x)
    """)
    assert "mp_containers.ModuleList([])" in convert_source(source).code


def test_a_subclassed_owner_beside_another_class_with_a_list_of_that_name_is_hoisted(tmp_path):
    """guided-diffusion: UNetModel (subclassed by SuperResModel) and EncoderUNetModel each fill their own
    ``self.input_blocks``; the other class's adds are not the subclassed one's."""
    import torch
    source = READS_SOURCE + textwrap.dedent("""


        class Encoder(nn.Module):
            def __init__(self, dim=4):
                super().__init__()
                self.input_blocks = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim))])
                self.input_blocks.append(nn.Linear(dim, dim))

            def forward(self, x):
                for m in self.input_blocks:
                    x = m(x)
                return x
    """)
    code = convert_source(source).code
    assert code.count("self.input_blocks = input_blocks") == 2 and "mp_containers" not in code, code
    module = load_module(code, tmp_path / "m_family.py", "m_family")
    torch_module = load_module(source, tmp_path / "t_family.py", "t_family")
    for cls in ("Child", "Encoder"):
        names = [p.name for p in getattr(module, cls)().get_parameters()]
        assert sorted(names) == sorted(getattr(torch_module, cls)().state_dict()), (cls, names)
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Child", [x], tmp_path, "family_child", "pynative", atol=1e-5)
