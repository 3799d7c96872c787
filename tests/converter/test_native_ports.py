"""Native output decided from facts in the code (mindport/migrator/native_facts.py, rules/jit_markers.py, the
``switch`` "*" choice): each program converts to MindSpore's own op or layer only where the facts allow, keeps the
runtime one elsewhere, and the port matches torch either way (real torch, real MindSpore)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches, assert_port_matches_in_mode, load_module


def _convert(source: str) -> str:
    result = convert_source(textwrap.dedent(source))
    assert not result.diagnostics, result.diagnostics
    return result.code


HEAD = """
import torch
import torch.nn as nn


"""

# ------------------------------------------------------------------------------------------ in-place activations

NATIVE_RELU = HEAD + """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 3, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(3)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(3, 3, 3, padding=1)
        self.body = nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU(inplace=True), nn.ReLU6(inplace=True))

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out += identity
        out = self.relu(out)
        return self.body(self.relu(self.bn1(out)))
"""


def test_inplace_activation_with_no_reader_afterwards_is_the_native_layer(tmp_path):
    code = _convert(NATIVE_RELU)
    assert "Inplace" not in code and "mindport" not in code
    assert code.count("nn.ReLU()") == 2 and "nn.ReLU6()" in code
    report = assert_port_matches(textwrap.dedent(NATIVE_RELU), code, "Block", (2, 3, 6, 6), tmp_path, "relu_ok", 1e-5)
    assert report.ok


# each: the in-place result's input is read afterwards in torch, so the runtime Cell must stay
READ_AFTER = {
    "read_after": """
        def forward(self, x):
            y = self.conv(x)
            z = self.relu(y)
            return z + y
    """,
    "alias": """
        def forward(self, x):
            y = self.conv(x)
            keep = y
            y = self.relu(y)
            return y + keep
    """,
    "parameter": """
        def forward(self, x):
            return self.relu(x) + 0
    """,
    "same_statement": """
        def forward(self, x):
            y = self.conv(x)
            return self.relu(y) + y
    """,
    "same_statement_left": """
        def forward(self, x):
            y = self.conv(x)
            y = y * 1.0
            return y + self.relu(y)
    """,
    "list": """
        def forward(self, x):
            y = self.conv(x)
            feats = [y]
            y = self.relu(y)
            return y + feats[0]
    """,
    "passed_on": """
        def forward(self, x):
            return self.seq(self.conv(x))
    """,
}


@pytest.mark.parametrize("case", sorted(READ_AFTER))
def test_inplace_activation_whose_input_is_read_afterwards_keeps_the_runtime_cell(case, tmp_path):
    source = HEAD + textwrap.dedent("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3, padding=1)
                self.relu = nn.ReLU(inplace=True)
                self.seq = nn.Sequential(self.relu)
    """) + textwrap.indent(textwrap.dedent(READ_AFTER[case]), "    ")
    code = _convert(source)
    assert "mp_nn.InplaceReLU()" in code, code
    assert_port_matches(source, code, "Net", (2, 3, 5, 5), tmp_path, f"relu_{case}", 1e-5)


STRAIGHT_LINE = HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.stage = self._make_stage(4)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)
        self.fc = nn.Linear(4 * 5 * 5, 2)

    def _make_stage(self, c):
        return nn.Sequential(nn.Conv2d(c, c, 1), nn.Identity())

    def forward(self, x):
        x = self.conv(x)
        x = self.stage(x)
        x = self.bn(x)
        x = self.relu(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_inplace_activation_in_straight_line_code_reads_only_the_binding_that_reaches_it(mode, tmp_path):
    # cifar100's WideResNet: x is rebound by layers of any kind before (self.stage may hand its input on), but the
    # tensor ReLU gets is BatchNorm's new output, read by nothing else before or after: out of place is the same
    code = _convert(STRAIGHT_LINE)
    assert "self.relu = nn.ReLU()" in code and "Inplace" not in code, code
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(textwrap.dedent(STRAIGHT_LINE), code, "Net", [x], tmp_path, f"straight_{mode}", mode,
                                atol=1e-5)


@pytest.mark.parametrize("forward", [
    # the binding that reaches the call is a layer that may return its input (nn.Identity hands x on)
    "x = self.conv(x)\nx = self.stage(x)\nx = self.relu(x)\nreturn self.fc(x.view(x.size(0), -1))",
    # a binding in a block: not straight-line code (self.stage's tensor may reach the call)
    "x = self.bn(self.conv(x))\nif x.shape[0] > 1:\n    x = self.stage(x)\nx = self.relu(x)\n"
    "return self.fc(x.view(x.size(0), -1))",
    # the fresh tensor handed on between its binding and the call
    "x = self.bn(self.conv(x))\nkeep = x\nx = self.relu(x)\nreturn self.fc((x + keep).view(x.size(0), -1))",
])
def test_inplace_activation_in_straight_line_code_keeps_the_runtime_cell_otherwise(forward, tmp_path):
    head, _, _ = STRAIGHT_LINE.partition("    def forward(self, x):")
    source = head + "    def forward(self, x):\n" + textwrap.indent(forward, "        ") + "\n"
    code = _convert(source)
    assert "mp_nn.InplaceReLU()" in code, code
    assert_port_matches(textwrap.dedent(source), code, "Net", (2, 3, 5, 5), tmp_path,
                        f"straight_no_{abs(hash(forward))}", 1e-5)


def test_inplace_activation_on_a_tensor_with_a_view_keeps_the_runtime_cell():
    # torch's view shares the storage; the runtime Cell writes the result into its input (the view is a copy in
    # MindSpore, a limitation of the runtime layer, not of this choice): the converter must not make it out of place
    code = _convert(HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.conv(x)
        flat = y.view(-1)
        y = self.relu(y)
        return y + flat.view(y.shape)
""")
    assert "mp_nn.InplaceReLU()" in code


def test_inplace_activation_first_in_a_sequential_keeps_the_runtime_cell(tmp_path):
    source = HEAD + textwrap.dedent("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.pre = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(3, 3, 1))

            def forward(self, x):
                x = x * 1.0
                return self.pre(x) + x
    """)
    code = _convert(source)
    assert "mp_nn.InplaceReLU()" in code
    assert_port_matches(source, code, "Net", (2, 3, 4, 4), tmp_path, "relu_seq_first", 1e-5)


def test_sequential_whose_outputs_are_read_member_by_member_keeps_the_runtime_cell(tmp_path):
    # torch: the conv output appended to feats is overwritten by the in-place ReLU that follows it
    source = HEAD + textwrap.dedent("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU(inplace=True), nn.Conv2d(3, 3, 1))

            def forward(self, x):
                feats = []
                for layer in self.features:
                    x = layer(x)
                    feats.append(x)
                return feats[0] + feats[2]
    """)
    code = _convert(source)
    assert "mp_nn.InplaceReLU()" in code
    assert_port_matches(source, code, "Net", (2, 3, 4, 4), tmp_path, "relu_seq_iter", 1e-5)


def test_layer_read_on_another_object_keeps_the_runtime_cell():
    code = _convert(HEAD + """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.conv(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        y = self.block.conv(x)
        return self.block.act(y) + y
""")
    assert "mp_nn.InplaceReLU()" in code


def test_subclassed_class_keeps_the_runtime_cell():
    code = _convert(HEAD + """
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.conv(x))


class Child(Base):
    def forward(self, x):
        y = self.conv(x)
        return self.relu(y) + y
""")
    assert "mp_nn.InplaceReLU()" in code


# ------------------------------------------------------------------------------------------------ ModuleList

LISTS = HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.heads = nn.ModuleList([nn.Linear(4, 3), nn.Linear(4, 3)])
        self.grown = nn.ModuleList([nn.Linear(3, 3)])
        self.grown.append(nn.Linear(3, 3))
        self.maybe = nn.ModuleList([nn.Linear(3, 3), None])
        self.empty = nn.ModuleList()
        for _ in range(2):
            self.empty.append(nn.Linear(3, 3))

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        y = self.heads[0](x) + self.heads[1](x)
        for layer in self.grown:
            y = layer(y)
        for layer in self.empty:
            y = layer(y)
        return y + self.maybe[0](y)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_module_list_of_cells_never_added_to_is_cell_list(mode, tmp_path):
    code = _convert(LISTS)
    assert "self.blocks = nn.CellList([" in code and "self.heads = nn.CellList([" in code
    # a display appended to in __init__: filled in a local first too (CellList's guessed prefix fails when the first
    # member is a sequence of its own: test_cell_list_names)
    assert "        grown = nn.CellList([" in code and "        self.grown = grown\n" in code
    # empty, then appended in __init__: CellList would drop its owner's prefix, so it is filled in a local first
    assert "        empty = nn.CellList()" in code and "        self.empty = empty\n" in code
    assert "self.maybe = mp_containers.ModuleList(" in code  # holding None: the runtime ModuleList
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(LISTS, code, "Net", [x], tmp_path, "lists", mode, rtol=1e-5, atol=1e-5)


def test_cell_list_names_parameters_as_torch_does(tmp_path):
    code = _convert(LISTS)
    report = assert_port_matches(LISTS, code, "Net", (2, 4), tmp_path, "list_names", 1e-5)
    assert report.ok and "blocks.1.weight" in report.mapping and "heads.0.bias" in report.mapping
    assert "empty.1.weight" in report.mapping


# ------------------------------------------------------------------------------------------------ randn / rand

def test_randn_without_dtype_is_ops_randn_and_with_one_the_runtime_function(tmp_path):
    code = _convert("""
        import torch


        def draw(dtype):
            return torch.randn(2, 3), torch.rand(4), torch.randn(2, dtype=torch.complex64), torch.rand(3, dtype=dtype)
    """)
    assert "ops.randn(2, 3)" in code and "ops.rand(4)" in code
    assert "mp_math.randn(2, dtype=ms.complex64)" in code and "mp_math.rand(3, dtype=dtype)" in code
    import mindspore as ms

    a, b, c, d = load_module(code, tmp_path / "draw.py", "draw_native").draw(ms.float16)
    assert (a.shape, a.dtype, b.dtype, c.dtype, d.dtype) == ((2, 3), ms.float32, ms.float32, ms.complex64, ms.float16)
    imag = load_module(code, tmp_path / "draw2.py", "draw_native2").draw(ms.float32)[2].imag()
    assert float(abs(imag).sum().asnumpy()) > 0  # a complex draw: imaginary parts drawn too, as torch


# ------------------------------------------------------------------------------------------------ torch.jit

JIT = HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @torch.jit.ignore
    def extra(self, x):
        return x * 2

    @torch.jit.unused
    def unused(self, x):
        return x

    @torch.jit.export
    def exported(self, x):
        return x + 1

    def forward(self, x):
        if torch.jit.is_scripting():
            x = x * 0
        elif x.shape[0] > 100:
            x = x * 5
        if not torch.jit.is_tracing() and x.shape[0] > 1:
            x = self.extra(x)
        y = x if torch.jit.is_scripting() or torch.jit.is_tracing() else x + 3
        return self.exported(self.fc(y)) + gate(y)


@torch.jit.script
def gate(x):
    return x * torch.sigmoid(x)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_jit_markers_fold_away_and_the_port_matches(mode, tmp_path):
    code = _convert(JIT)
    assert "jit" not in code and "mp_math.jit" not in code
    assert "is_scripting" not in code and "if x.shape[0] > 1:" in code and "y = x + 3" in code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(JIT, code, "Net", [x], tmp_path, "jit", mode, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------------ int-to-float guards

GUARDS = HEAD + """
import math


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, steps):
        h = self.fc(x)
        freqs = torch.exp(-math.log(100.0) * torch.arange(4) / 4)
        angles = h * freqs
        idx = torch.arange(4)
        return (torch.sigmoid(h) + h.exp() + angles.cos() + torch.sin(angles.view(2, 4)) + torch.exp(idx)
                + torch.sqrt(steps) + torch.tanh(x))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_int_to_float_guard_only_where_an_integer_can_arrive(mode, tmp_path):
    code = _convert(GUARDS)
    for native in ("ops.sigmoid(h)", "ops.exp(h)", "ops.cos(angles)", "ops.sin(angles.view(2, 4))",
                   "ops.exp(-math.log(100.0)",  # math.log in forward: compiled by the graph itself (native27)
                   "_precise_tanh(x)"):  # x goes into an nn.Linear, which refuses integers: the file-local tanh
        assert native in code, native
    # an arange of integers, and parameters (whose dtype the code does not show) keep the guard
    for guarded in ("mp_math.exp(idx)", "mp_math.sqrt(steps)"):
        assert guarded in code, guarded
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    steps = np.arange(8).reshape(2, 4).astype(np.int64)  # an integer input: torch computes sqrt in float32
    assert_port_matches_in_mode(GUARDS, code, "Net", [x, steps], tmp_path, "guards", mode, rtol=1e-5, atol=1e-5)


NESTED_LISTS = HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(2):
            self.layers.append(nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)]))
        self.pair = nn.ModuleList([nn.Linear(4, 4)])
        self.pair.append(nn.Linear(4, 4))
        self.named = nn.ModuleList([nn.Linear(4, 4)])
        self.named.add_module("extra", nn.Linear(4, 4))

    def forward(self, x):
        for a, b in self.layers:
            x = b(a(x))
        for layer in self.pair:
            x = layer(x)
        for layer in self.named:
            x = layer(x)
        return x
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_module_list_displays_of_cells_are_cell_lists_where_they_are_built(mode, tmp_path):
    code = _convert(NESTED_LISTS)
    assert "    layers.append(nn.CellList([" in code and "        pair = nn.CellList([" in code \
        and "        self.pair = pair\n" in code
    # empty, then appended in __init__: filled in a local, then assigned (CellList names members by its owner then)
    assert "        layers = nn.CellList([])" in code and "        self.layers = layers\n" in code
    assert "self.named = mp_containers.ModuleList([" in code  # members added by name: the runtime's
    _lists_match(NESTED_LISTS, code, mode, tmp_path, "nested", ("layers.1.0.weight", "pair.1.bias"))


def _lists_match(source, code, mode, tmp_path, name, names):
    """The port matches torch in ``mode``; in PyNative, its weights also land under torch's ``names``."""
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(source, code, "Net", [x], tmp_path, name, mode, rtol=1e-5, atol=1e-5)
    if mode == "pynative":
        report = assert_port_matches(source, code, "Net", (2, 4), tmp_path, f"{name}_names", 1e-5)
        assert report.ok and all(n in report.mapping for n in names)


OPTIONAL_MEMBERS = HEAD + """
class Net(nn.Module):
    def __init__(self, post_norm=False):
        super().__init__()
        pre = nn.LayerNorm(4)
        post = nn.LayerNorm(4) if post_norm else None
        self.norms = nn.ModuleList([pre, post])

    def forward(self, x):
        pre, post = self.norms
        x = pre(x)
        return post(x) if post is not None else x
"""


def test_module_list_of_names_that_may_hold_none_keeps_the_runtime_list(tmp_path):
    # x-transformers builds ModuleList([pre_branch_norm, post_branch_norm, post_main_norm]) with None members
    code = _convert(OPTIONAL_MEMBERS)
    assert "self.norms = mp_containers.ModuleList([pre, post])" in code
    assert_port_matches(OPTIONAL_MEMBERS, code, "Net", (2, 4), tmp_path, "optional_members", 1e-5)


FILLED_LISTS = HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(2):
            block = nn.ModuleList()
            block.append(nn.Linear(4, 4))
            block.extend([nn.LayerNorm(4), nn.GELU()])
            self.layers.append(block)
        self.heads = nn.ModuleList()
        self.heads.insert(0, nn.Linear(4, 3))
        self.maybe = nn.ModuleList()
        self.maybe.append(None)
        self.maybe.append(nn.Linear(3, 3))
        self.grown = nn.ModuleList()
        self.grown += [nn.Linear(3, 3)]
        self.indexed = nn.ModuleList([nn.Linear(3, 3)])
        self.indexed[0] = nn.Linear(3, 3)

    def forward(self, x):
        for fc, norm, act in self.layers:
            x = act(norm(fc(x)))
        y = self.heads[0](x)
        return self.indexed[0](self.grown[0](self.maybe[1](y)))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_module_list_filled_only_with_cells_is_cell_list(mode, tmp_path):
    # the lucidrains pattern: layers = ModuleList([]) then layers.append(ModuleList([...])) in a loop
    code = _convert(FILLED_LISTS)
    assert "        layers = nn.CellList([])" in code and "block = nn.CellList()" in code
    assert "        self.layers = layers\n" in code
    # empty self lists filled in __init__: built in a local first (an owned CellList would drop the prefix)
    assert "        heads = nn.CellList()" in code and "        self.heads = heads\n" in code
    for kept in ("maybe", "grown"):  # None appended; += (CellList has no +=): the runtime ModuleList
        assert f"self.{kept} = mp_containers.ModuleList(" in code
    assert "self.indexed = mp_containers.ModuleList([" in code  # a member replaced by index
    _lists_match(FILLED_LISTS, code, mode, tmp_path, "filled", ("layers.1.0.weight", "heads.0.bias"))


# ------------------------------------------------------------------------------------------------ softmax

SOFTMAX = HEAD + """
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.scale = 8 ** -0.5
        self.head = nn.Linear(8, 3)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        sim = q @ k.transpose(-2, -1) * self.scale
        mask_value = -torch.finfo(sim.dtype).max
        sim = sim.masked_fill(mask, mask_value)
        attn = sim.softmax(dim=-1)
        out = attn @ v
        return F.softmax(self.head(out), dim=-1), torch.softmax(out, -1)
"""

MASKED_SOFTMAX = HEAD + """
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)

    def forward(self, x, mask):
        scores = torch.matmul(self.q(x), x.transpose(-2, -1))
        scores = scores.masked_fill(mask, float("-inf"))
        return F.softmax(scores, dim=-1)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_softmax_of_an_input_with_no_row_of_all_minus_inf_is_ops_softmax(mode, tmp_path):
    code = _convert(SOFTMAX)
    assert code.count("ops.softmax(") == 3 and "mp_F" not in code
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.zeros((2, 5, 5), dtype=bool)
    mask[0, 1, :] = True  # a fully masked query: the finite fill gives a uniform row, no -inf reaches the kernel
    mask[1, :, 3] = True
    assert_port_matches_in_mode(SOFTMAX, code, "Net", [x, mask], tmp_path, "softmax", mode, rtol=1e-5, atol=1e-6)


DROPPED_SOFTMAX = HEAD + """
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.scale = 8 ** -0.5
        self.attn_drop = nn.Dropout(0.1)
        self.proj_drop = nn.Dropout(0.0)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, C).permute(2, 0, 1, 3)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        out = self.proj_drop(attn @ v)
        return attn, F.softmax(out, dim=-1), F.dropout(out, 0.2, self.training).softmax(-1)
"""

DROPPED_MASKED_SOFTMAX = HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)

    def forward(self, x, bias):
        return self.drop(x + bias).softmax(dim=-1)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_softmax_of_a_dropout_of_a_product_is_ops_softmax(mode, tmp_path):
    """DINO's and timm's attention (``attn = self.attn_drop(attn)`` rebinding the softmax's own input): a dropout
    hands its input's rows on (zeroed and scaled, no -inf made), so the product's softmax is MindSpore's own."""
    code = _convert(DROPPED_SOFTMAX)
    assert code.count("ops.softmax(") == 3 and "mp_F" not in code, code
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    assert_port_matches_in_mode(DROPPED_SOFTMAX, code, "Net", [x], tmp_path, "dropped_softmax", mode, rtol=1e-5,
                                atol=1e-6)


def test_softmax_of_a_dropout_of_a_parameter_keeps_the_runtime_softmax(tmp_path):
    """A dropout of a value the caller may have masked (a parameter added) keeps the runtime softmax, which gives
    torch's numbers on a row of all -inf."""
    code = _convert(DROPPED_MASKED_SOFTMAX)
    assert "mp_F.softmax(" in code, code
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 5)).astype(np.float32)
    bias = np.zeros((2, 4, 5), dtype=np.float32)
    bias[0, 1, :] = -np.inf
    # torch: nan on the masked row, the right values on the others (MindSpore's CPU kernel spoils them)
    assert_port_matches_in_mode(DROPPED_MASKED_SOFTMAX, code, "Net", [x, bias], tmp_path, "dropped_masked",
                                "pynative", rtol=1e-5, atol=1e-6)


def test_softmax_of_a_row_masked_with_minus_inf_keeps_the_runtime_softmax(tmp_path):
    import mindspore as ms
    import torch

    code = _convert(MASKED_SOFTMAX)
    assert "mp_F.softmax(scores, dim=-1)" in code  # float("-inf") in the function: a row may be all -inf
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.zeros((2, 5, 5), dtype=bool)
    mask[0, 1, :] = True
    torch_net = load_module(MASKED_SOFTMAX, tmp_path / "t_masked.py", "t_masked").Net().eval()
    ms_net = load_module(code, tmp_path / "m_masked.py", "m_masked").Net()
    from mindport import transfer_weights
    transfer_weights(torch_net.state_dict(), ms_net)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x), torch.from_numpy(mask)).numpy()
    got = ms_net(ms.Tensor(x), ms.Tensor(mask)).asnumpy()
    assert np.isnan(want[0, 1]).all() and np.isnan(got[0, 1]).all()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # NaN where torch's is, the other rows right


FLOAT_FACTS = HEAD + """
import math


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.randn(4))
        self.count = nn.Parameter(torch.tensor(3), requires_grad=False)
        self.fcs = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        freqs = torch.exp(torch.arange(4, dtype=torch.float32) * -0.5)
        a = torch.sigmoid(self.alpha)
        b = torch.sin(self.fcs[0](x))  # (tanh of a float: the file-local _precise_tanh)
        c = torch.exp(self.count)
        return x * freqs + a + b + c + torch.sigmoid(x)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_float_facts_of_parameters_lists_and_dtype_arguments(mode, tmp_path):
    code = _convert(FLOAT_FACTS)
    for native in ("ops.exp(ops.arange(", "ops.sigmoid(self.alpha)", "ops.sin(self.fcs[0](x))"):
        assert native in code  # a float dtype=, a Parameter of a float tensor, a list of Linear layers
    assert "mp_math.exp(self.count)" in code and "mp_math.sigmoid(x)" in code  # an int Parameter; a parameter
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(FLOAT_FACTS, code, "Net", [x], tmp_path, "float_facts", mode, rtol=1e-5, atol=1e-5)


TYPE_CASTS = HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x).type(torch.float64)
        h = (h * 2).type(x.dtype)
        return h + x.type(dtype=torch.int32).type(torch.float32) + x.type('torch.DoubleTensor').float()
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_type_given_a_dtype_is_astype(mode, tmp_path):
    code = _convert(TYPE_CASTS)
    assert "self.fc(x).astype(ms.float64)" in code and "(h * 2).astype(x.dtype)" in code
    assert "x.astype(ms.int32).astype(ms.float32)" in code
    assert "mp_tensor.type(x, dtype='torch.DoubleTensor')" in code  # a type name: decided on the value
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32) * 3
    assert_port_matches_in_mode(TYPE_CASTS, code, "Net", [x], tmp_path, "type_casts", mode, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------- layer classes as values

LAYER_VALUES = HEAD + """
class Mlp(nn.Module):
    def __init__(self, dim, act_layer=nn.GELU, norm_layer=nn.LayerNorm):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = act_layer()
        self.norm = norm_layer(dim)

    def forward(self, x):
        return self.norm(self.act(self.fc(x)))


class Net(nn.Module):
    def __init__(self, dim=4, act_layer=nn.ReLU, kept=nn.GELU):
        super().__init__()
        self.mlp = Mlp(dim, act_layer=act_layer)
        self.other = Mlp(dim, nn.SiLU, norm_layer=nn.LayerNorm)
        self.kept = kept(approximate="tanh") if kept is nn.GELU else kept()

    def forward(self, x):
        return self.kept(self.other(self.mlp(x)))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_layer_classes_passed_as_values_whose_every_call_is_known_are_bound_statically(mode, tmp_path):
    code = _convert(LAYER_VALUES)
    assert "act_layer=lambda: nn.GELU(approximate=False)" in code  # torch's exact GELU, MindSpore's default tanh
    assert "norm_layer=lambda normalized_shape: nn.LayerNorm(" in code
    assert "act_layer=nn.ReLU" in code and "Mlp(dim, nn.SiLU, norm_layer=_mp_lambda)" in code
    assert "_mp_lambda = lambda normalized_shape: nn.LayerNorm(" in code  # a lambda argument: hoisted (GRAPH_MODE)
    # compared and called with arguments: the file's value class (native19; was the runtime adapter)
    assert 'kept=TorchGELU' in code and "if kept is TorchGELU" not in code and "mp_adapt" not in code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(LAYER_VALUES, code, "Net", [x], tmp_path, "layer_values", mode, rtol=1e-5, atol=1e-5)


CELL_FACTORIES = HEAD + """
class AttnBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc = nn.Linear(c, c)

    def forward(self, x):
        return self.fc(x)


def make_attn(c, kind="vanilla"):
    assert kind in ("vanilla", "none")
    if kind == "vanilla":
        return AttnBlock(c)
    elif kind == "none":
        return nn.Identity()
    else:
        raise ValueError(kind)


def maybe(c):
    if c:
        return AttnBlock(c)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.ModuleList()
        for i in range(2):
            block = nn.ModuleList()
            attn = nn.ModuleList()
            block.append(AttnBlock(4))
            attn.append(make_attn(4, "vanilla" if i else "none"))
            down = nn.Module()
            down.block = block
            down.attn = attn
            self.down.append(down)
        self.up = nn.ModuleList()
        for i in range(2):
            block = nn.ModuleList()
            block.append(maybe(4))
            self.up.append(block)

    def forward(self, x):
        for d in self.down:
            x = d.attn[0](d.block[0](x))
        for u in self.up:
            x = u[0](x)
        return x
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_lists_filled_by_functions_that_always_return_a_cell_are_cell_lists(mode, tmp_path):
    # taming/latent-diffusion: attn.append(make_attn(...)), down = nn.Module(); self.down.append(down)
    code = _convert(CELL_FACTORIES)
    # empty self lists appended to in __init__: filled in a local (down_: the name down is taken), then assigned
    assert "attn = nn.CellList()" in code and "        down_ = nn.CellList()" in code \
        and "        self.down = down_\n" in code and "        up = nn.CellList()" in code \
        and "        self.up = up\n" in code
    assert "block = mp_containers.ModuleList()" in code  # maybe() can return None: both bindings of block keep it
    _lists_match(CELL_FACTORIES, code, mode, tmp_path, "cell_factories", ("down.1.block.0.fc.weight",))


SPATIAL_SOFTMAX = HEAD + """
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        q = self.q(x)
        b, c, h, w = q.shape
        q = q.reshape(b, c, h * w).permute(0, 2, 1)
        k = x.reshape(b, c, h * w)
        w_ = torch.bmm(q, k)
        w_ = w_ * (int(c) ** (-0.5))
        w_ = F.softmax(w_, dim=2)
        return w_, (w_ + x.mean()).softmax(-1)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_softmax_of_a_scaled_product_rebound_by_its_own_result_is_ops_softmax(mode, tmp_path):
    # taming/latent-diffusion's AttnBlock: w_ = bmm(q, k); w_ = w_ * (int(c) ** -0.5); w_ = F.softmax(w_, dim=2)
    code = _convert(SPATIAL_SOFTMAX)
    assert "w_ = ops.softmax(w_, axis=2)" in code
    assert "mp_F.softmax((w_ + " in code  # a parameter's mean added: the runtime softmax
    x = np.random.default_rng(0).standard_normal((2, 4, 3, 3)).astype(np.float32)
    assert_port_matches_in_mode(SPATIAL_SOFTMAX, code, "Net", [x], tmp_path, "spatial_softmax", mode,
                                rtol=1e-5, atol=1e-6)


def test_layer_class_value_whose_call_cannot_convert_statically_keeps_the_adapter_and_its_line():
    # Embedding(max_norm=...) has no static MindSpore form: the value stays the runtime adapter, nothing is flagged
    code = _convert(HEAD + """
class Emb(nn.Module):
    def __init__(self, n, layer=nn.Embedding):
        super().__init__()
        self.e = layer(n, 4, max_norm=1.0)

    def forward(self, x):
        return self.e(x)
""")
    assert 'layer=mp_adapt.api("torch.nn.Embedding")' in code and "import torch" not in code


# ------------------------------------------------------------------------------------------ bool masks and ~

MASKS = HEAD + """
def mask_of(n):
    return torch.ones((n, n), dtype=torch.bool).triu(1)


class Net(nn.Module):
    def forward(self, x, mask, codes, flags):
        n = x.shape[-1]
        causal = torch.ones((n, n), dtype=torch.bool).triu(1)
        valid = (x > 0) & (x < 1)
        y = x.masked_fill(~mask, 0.0) + torch.masked_fill(x, mask=~mask[..., None][..., 0], value=2.0)
        y = y.masked_fill(~causal, -1.0) + x.masked_fill(~valid, 3.0)
        empty = ~torch.any(valid, dim=-1)
        return y, empty.float(), (~x.isnan()).float(), (~mask_of(n)).float(), ~codes, (~flags).float()
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_invert_of_a_bool_by_construction_or_a_mask_is_the_operator(mode, tmp_path):
    # ~ on a bool tensor is MindSpore's own ~ (a logical not); on a tensor whose dtype the code does not show (an
    # integer one flips the bits) the runtime bitwise_not stays. masked_fill's mask is bool or torch refuses it.
    code = _convert(MASKS)
    for native in ("x.masked_fill(mask=~mask, value=0.0)", "x.masked_fill(mask=~mask[..., None][..., 0], value=2.0)",
                   "y.masked_fill(mask=~causal, value=-1.0)", "x.masked_fill(mask=~valid, value=3.0)",
                   "empty = ~mp_math.any(valid, dim=-1)", "(~x.isnan())"):
        assert native in code, native
    for kept in ("mp_math.bitwise_not(codes)", "(mp_math.bitwise_not(flags))"):
        assert kept in code, kept
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 4)).astype(np.float32)
    x[0, 0, 0] = np.nan
    mask = rng.standard_normal((2, 4, 4)) > 0
    for codes, flags in ((np.arange(-8, 8, dtype=np.int32).reshape(4, 4), mask),
                         (np.arange(16, dtype=np.int64).reshape(4, 4), np.arange(4, dtype=np.int8))):
        assert_port_matches_in_mode(MASKS, code, "Net", [x, mask, codes, flags], tmp_path,
                                    f"masks_{codes.dtype}", mode, atol=1e-6)


# ------------------------------------------------------------------------------------------ devices

DEVICES = HEAD + """
def positions(n, device):
    return torch.arange(n, device=device)


class Net(nn.Module):
    def forward(self, x):
        n, device, h = x.shape[-1], x.device, 2
        *_, w, dev = *x.shape, x.device
        device2 = x.device
        seq = torch.arange(n, device=device).to(device2) + torch.zeros(w, device=dev)
        kept = x.device  # read: handed on to a function of the file
        return x * h + seq + positions(n, kept)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_device_no_converted_line_reads_is_not_bound(mode, tmp_path):
    # device= arguments and .to(device) vanish in MindSpore (placement is global): the device they read goes too
    code = _convert(DEVICES)
    assert "n, h = x.shape[-1], 2" in code and "*_, w = *x.shape," in code and "device2" not in code
    assert code.count("mp_tensor.device(") == 1 and "kept = mp_tensor.device(x)" in code
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(DEVICES, code, "Net", [x], tmp_path, "devices", mode, atol=1e-6)


SINUSOIDAL = HEAD + """
import math


def timestep_embedding(timesteps, embedding_dim):
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float32) * -emb)
    emb = emb.to(device=timesteps.device)
    emb = timesteps.float()[:, None] * emb[None, :]
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)
    return emb


class Net(nn.Module):
    def forward(self, x):
        half_dim = 4
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim) * -emb)
        emb = x[:, None] * emb[None, :]
        emb = torch.cat((emb.sin(), emb.cos()), dim=-1)
        idx = torch.arange(6)
        return emb.exp(), timestep_embedding(x, 8), torch.exp(torch.stack([idx, idx]))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_float_facts_of_joins_and_device_moves(mode, tmp_path):
    # the sinusoidal embedding of the diffusion UNets: a cat of floats, and a float moved to a device, are float
    code = _convert(SINUSOIDAL)
    for native in ("ops.cat([ops.sin(emb), ops.cos(emb)], axis=1)", "ops.cat((ops.sin(emb), ops.cos(emb)), axis=-1)",
                   "ops.exp(emb)"):
        assert native in code, native
    assert "mp_math.exp(ops.stack([idx, idx]))" in code  # int members: an int stack, guarded
    x = np.linspace(0, 3, 6).astype(np.float32)
    assert_port_matches_in_mode(SINUSOIDAL, code, "Net", [x], tmp_path, "sinusoidal", mode, rtol=1e-5, atol=1e-5)


SOFTMAX_LAYERS = HEAD + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = nn.Softmax(dim=-1)
        self.masked = nn.Softmax(dim=-1)
        self.to_qkv = nn.Linear(4, 12, bias=False)

    def forward(self, x, mask):
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        dots = torch.matmul(q, k.transpose(-1, -2)) * 0.5
        return torch.matmul(self.attend(dots), v), self.other(dots, mask)

    def other(self, dots, mask):
        return self.masked(dots.masked_fill(mask, float("-inf")))
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_softmax_layer_only_called_on_rows_with_no_minus_inf_is_nn_softmax(mode, tmp_path):
    # vit-pytorch's Attention: self.attend = nn.Softmax(dim=-1) called on q @ k^T * scale only. The layer called on
    # a row masked with -inf keeps the runtime one (MindSpore's CPU kernel gives the other rows wrong values then);
    # a port for Ascend or a GPU needs no facts.
    code = _convert(SOFTMAX_LAYERS)
    assert "self.attend = nn.Softmax(axis=-1)" in code and "self.masked = mp_nn.Softmax(dim=-1)" in code
    ascend = convert_source(textwrap.dedent(SOFTMAX_LAYERS), device="ascend").code
    assert "self.masked = nn.Softmax(axis=-1)" in ascend and "mindport" not in ascend
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    mask = np.zeros((2, 3, 3), dtype=bool)
    mask[0, 1, :] = True  # one query fully masked: NaN in torch, and the other rows exact
    mask[1, :, 0] = True
    assert_port_matches_in_mode(SOFTMAX_LAYERS, code, "Net", [x, mask], tmp_path, "softmax_layers", mode,
                                rtol=1e-5, atol=1e-6)


RANDN_LIKE = HEAD + """
class Noise(nn.Module):
    def forward(self, logvar):
        std = torch.exp(0.5 * logvar)
        return torch.randn_like(std) * std


def other(t):
    return torch.randn_like(t)
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_randn_like_of_a_float_by_construction_is_ops_randn_like_with_its_dtype(mode, tmp_path):
    # examples/vae: std = torch.exp(0.5 * logvar); eps = torch.randn_like(std). torch keeps the input's dtype;
    # ops.randn_like gives float32 for a float16 input unless told the dtype
    import mindspore as ms
    import torch

    code = _convert(RANDN_LIKE)
    assert "ops.randn_like(std, dtype=std.dtype)" in code, code
    assert "return mp_math.randn_like(t)" in code  # a parameter: the runtime's (complex, dtype)
    net = load_module(code, tmp_path / f"m_randn_like_{mode}.py", f"m_randn_like_{mode}").Noise()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        for dtype in (np.float16, np.float32, np.float64):
            x = np.zeros((3, 4), dtype)
            got = net(ms.Tensor(x))
            want = torch.exp(0.5 * torch.from_numpy(x))
            assert got.shape == tuple(want.shape)
            assert str(got.dtype).lower() == str(want.dtype).replace("torch.", "")
            assert float(got.asnumpy().std()) > 0.1  # draws, not zeros
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


IMPLICIT_DIM_SOFTMAX = textwrap.dedent('''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(6, 5)

    def forward(self, x):
        return F.softmax(self.head(x))
''')


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("shape", [(3, 6), (2, 3, 6)])
def test_softmax_with_torch_implicit_dim_keeps_the_runtime_softmax(mode, shape, tmp_path):
    """``F.softmax(x)`` with no dim (0.3-era code): torch picks dim 0 for a rank of 0, 1 or 3 and dim 1 otherwise, at
    run time; an unmasked input does not make it ``ops.softmax(axis=None)`` (which MindSpore refuses), the runtime
    softmax picks the dim as torch does (a 3-D input is normalised over dim 0)."""
    code = _convert(IMPLICIT_DIM_SOFTMAX)
    assert "mp_F.softmax(self.head(x), dim=None)" in code, code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_port_matches_in_mode(IMPLICIT_DIM_SOFTMAX, code, "Net", [x], tmp_path, f"implicit_{len(shape)}", mode,
                                rtol=1e-5, atol=1e-6)


IMPLICIT_DIM_SOFTMAX_LAYER = textwrap.dedent('''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(6, 5)
        self.softmax = nn.Softmax()

    def forward(self, x):
        return self.softmax(self.head(x))
''')


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("shape", [(3, 6), (2, 3, 6)])
def test_softmax_layer_with_torch_implicit_dim_keeps_the_runtime_layer(mode, shape, tmp_path):
    """``self.softmax = nn.Softmax()`` (AnubhavGupta3377's text classifiers): the layer of an unmasked input does
    not become ``nn.Softmax(axis=None)`` (MindSpore refuses it when called); the runtime layer picks torch's dim."""
    code = _convert(IMPLICIT_DIM_SOFTMAX_LAYER)
    assert "mp_nn.Softmax(dim=None)" in code, code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_port_matches_in_mode(IMPLICIT_DIM_SOFTMAX_LAYER, code, "Net", [x], tmp_path, f"implicit_layer_{len(shape)}",
                                mode, rtol=1e-5, atol=1e-6)
