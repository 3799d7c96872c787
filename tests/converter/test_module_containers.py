"""Containers filled the ways real models fill them: ``nn.Sequential()`` grown by ``add_module`` (MindSpore's
SequentialCell runs its ``cell_list``, which ``insert_child_to_cell`` alone leaves empty: the stage ran as the
identity), and ``nn.ModuleList`` given a tuple (``*fns``) or a generator (CellList accepts only a list)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches, assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def stage(cin, cout, depth):
        block = nn.Sequential()
        for i in range(depth):
            block.add_module('unit_%d' % i, nn.Conv2d(cin if i == 0 else cout, cout, 3, padding=1))
            block.register_module('act_%d' % i, nn.ReLU())
        return block


    class Branches(nn.Module):
        def __init__(self, *fns):
            super().__init__()
            self.fns = nn.ModuleList(fns)

        def forward(self, x):
            return sum(map(lambda fn: fn(x), self.fns))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = stage(3, 4, 2)
            self.add_module('mix', Branches(nn.Conv2d(4, 4, 1), nn.Conv2d(4, 4, 3, padding=1)))
            self.heads = nn.ModuleList(nn.Linear(4 * 6 * 6, 3) for _ in range(2))
            first = [nn.Identity()]
            self.ids = nn.ModuleList(first +
                                     [nn.Identity() for _ in range(2)])
            self.more = nn.ModuleList([nn.Identity()] +
                                      [nn.Identity()])

        def forward(self, x):
            y = torch.flatten(self.mix(self.stem(x)), 1)
            return torch.stack([head(y) for head in self.heads])
""")


def test_containers_filled_at_run_time_convert_and_match(tmp_path):
    result = convert_source(SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_nn.add_module(block, 'unit_%d' % i" in result.code
    assert "mp_containers.ModuleList(fns)" in result.code
    assert "mp_containers.ModuleList(first +\n" in result.code  # a value over several lines (it once did not parse)
    assert "mp_containers.ModuleList([nn.Identity()] +\n" in result.code
    report = assert_port_matches(SOURCE, result.code, "Net", (2, 3, 6, 6), tmp_path, "containers", atol=1e-5)
    assert not report.missing and not report.unexpected, report


def test_a_flag_set_on_a_slice_is_not_a_lost_update(tmp_path):
    """``buf[:n].requires_grad_(False)`` changes a flag and returns the slice: the indexed-view check (an in-place
    update on a copy would be lost) does not apply, and the port adds the slice as torch does."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Embed(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.register_buffer('table', torch.arange(24.0).reshape(6, 4) / 10)

            def forward(self, x):
                pe = self.table[:x.shape[0]].requires_grad_(False)
                return self.proj(x) + pe
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert_port_matches(source, result.code, "Embed", (3, 4), tmp_path, "flag", atol=1e-6)


GPT_STYLE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return x + torch.tanh(self.fc(x))


    class Net(nn.Module):
        def __init__(self, d=4, depth=2):
            super().__init__()
            self.body = nn.ModuleDict(dict(
                inp=nn.Linear(3, d),
                h=nn.ModuleList([Block(d) for _ in range(depth)]),
                tail=nn.Sequential(nn.Linear(d, d), nn.ReLU()),
                heads=nn.ModuleDict({'a': nn.Linear(d, 2)}),
            ))
            self.body['extra'] = nn.Linear(d, 2)

        def forward(self, x):
            x = self.body.inp(x)
            for block in self.body.h:
                x = block(x)
            x = self.body['tail'](x)
            out = self.body.extra(x) * len(self.body)
            for name, head in self.body.heads.items():
                out = out + head(x)
            if 'tail' in self.body:
                out = out * 2
            return out
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_module_dict_holds_a_module_list(tmp_path, mode):
    """``ModuleDict(dict(h=ModuleList(...)))`` (GPT-style models): MindSpore's CellDict refuses a CellList value and
    reads as a plain dictionary in a graph (``d.key`` fails); the runtime ModuleDict holds any Cell, names the
    parameters like torch (``body.h.0.fc.weight``) and is read like a Cell in a graph."""
    result = convert_source(GPT_STYLE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "ModuleDict(dict(" in result.code and "CellDict" not in result.code
    if mode == "graph":
        x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
        assert_port_matches_in_mode(GPT_STYLE, result.code, "Net", [x], tmp_path, "mdict", mode, atol=1e-5)
        return
    report = assert_port_matches(GPT_STYLE, result.code, "Net", (2, 3), tmp_path, "mdict", atol=1e-5)
    assert not report.missing and not report.unexpected, report


OPTIONAL_NORMS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, d, pre_norm):
            super().__init__()
            self.norms = nn.ModuleList([nn.LayerNorm(d) if pre_norm else None, None, nn.LayerNorm(d)])
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            pre, mid, post = self.norms
            if pre is not None:
                x = pre(x)
            x = self.fc(x)
            if mid is not None:
                x = mid(x)
            return post(x)


    class Net(nn.Module):
        def __init__(self, d=4):
            super().__init__()
            self.layers = nn.ModuleList([])
            for i in range(2):
                self.layers.append(nn.ModuleList([Block(d, i == 0), None]))

        def forward(self, x):
            for block, _ in self.layers:
                x = block(x)
            return x
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_module_list_holds_none(tmp_path, mode):
    """``ModuleList([pre_norm, None, post_norm])`` (x-transformers' optional norms, unpacked in forward): torch keeps
    the None member, MindSpore's CellList refused it; the runtime ModuleList keeps it in place, in a graph too."""
    result = convert_source(OPTIONAL_NORMS)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    if mode == "graph":
        x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
        assert_port_matches_in_mode(OPTIONAL_NORMS, result.code, "Net", [x], tmp_path, "mnone", mode, atol=1e-5)
        return
    report = assert_port_matches(OPTIONAL_NORMS, result.code, "Net", (2, 4), tmp_path, "mnone", atol=1e-5)
    assert not report.missing and not report.unexpected, report


MIXED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Mixed(nn.ModuleDict):
        def __init__(self, channels=(2, 4), kernels=(1, 3)):
            super().__init__()
            for i, (c, k) in enumerate(zip(channels, kernels)):
                self.add_module(str(i), nn.Conv2d(c, c, k, padding=k // 2))
            self.splits = list(channels)

        def forward(self, x):
            parts = torch.split(x, self.splits, 1)
            return torch.cat([conv(parts[i]) for i, conv in enumerate(self.values())], 1)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.mix = Mixed()

        def forward(self, x):
            return self.mix(x)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_module_dict_filled_by_add_module_lists_its_members(tmp_path, mode):
    """A class built on ``nn.ModuleDict`` and filled by ``self.add_module(str(i), conv)`` reads its members back
    with ``self.values()``: the added Cell is one of the dict's keys as in torch (it was a child only, so
    ``values()`` was empty and the concatenation got no tensors)."""
    x = np.random.default_rng(0).standard_normal((2, 6, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(MIXED, convert_source(MIXED).code, "Net", [x], tmp_path, "mixed", mode, atol=1e-5)


OPTIONAL_BIAS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Expert(nn.Module):
        def __init__(self, n, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(n, n) / n)
            if bias:
                self.bias = nn.Parameter(torch.randn(n))
            else:
                self.register_parameter('bias', None)

        def forward(self, x):
            y = x @ self.weight
            if self.bias is not None:
                y = y + self.bias
            return y


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Expert(4, bias=True)
            self.b = Expert(4, bias=False)

        def forward(self, x):
            return self.b(self.a(x))
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_parameter_registered_as_none_is_an_empty_slot(tmp_path, mode):
    """``register_parameter('bias', None)`` leaves an optional parameter empty: reads give None and no parameter is
    listed. ``insert_param_to_cell('bias', None)`` kept the None among the Cell's parameters, and a GRAPH_MODE compile
    failed on it ('NoneType' object has no attribute 'param_info')."""
    code = convert_source(OPTIONAL_BIAS).code
    assert "mp_nn.register_parameter(self, 'bias', None)" in code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(OPTIONAL_BIAS, code, "Net", [x], tmp_path, "optbias", mode, atol=1e-5)


NAMESPACE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Stem(nn.Module):
        def __init__(self):
            super().__init__()
            self.path = nn.ModuleList()
            self.path.add_module('pad', nn.ZeroPad2d((0, 1, 0, 1)))
            self.path.add_module('pool', nn.AvgPool2d(1, stride=2, count_include_pad=False))
            self.path.add_module('conv', nn.Conv2d(3, 4, 1, bias=False))
            self.blocks = nn.ModuleList()
            self.blocks.add_module('a', nn.Conv2d(4, 4, 1))

        def forward(self, x):
            x = self.path.conv(self.path.pool(self.path.pad(x)[:, :, 1:, 1:]))
            for block in self.blocks:
                x = block(x)
            return x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = Stem()

        def forward(self, x):
            return self.stem(x)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_module_list_used_as_a_namespace_is_a_cell(tmp_path, mode):
    """An empty ModuleList filled by ``add_module('pad', ...)`` and read as ``self.path.pad`` (NASNet): a graph
    turned the CellList into a tuple ("KeyError: '0'", "'Tuple' object has no attribute"); as a plain Cell it compiles,
    with the same parameter names. A ModuleList that is also iterated stays a list."""
    code = convert_source(NAMESPACE).code
    assert "self.path = nn.Cell()" in code and "self.blocks = mp_containers.ModuleList()" in code
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    assert_port_matches_in_mode(NAMESPACE, code, "Net", [x], tmp_path, "namespace", mode, atol=1e-5)


def test_runtime_layers_are_imported_once_under_one_name(tmp_path):
    """A file whose calls map to mindport.runtime.layers (``nn.Conv1d``, ``weight_norm``) and which also registers a
    parameter (S4D's ``self.register_parameter(name, nn.Parameter(t))``): the rule wrote ``mp_layers.`` while the
    mapping targets imported the module as ``mp_nn``, and the second import was never written (NameError)."""
    from port_check import assert_port_matches

    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(3, 4, 3, padding=1)
                self.register_parameter("scale", nn.Parameter(torch.full((4, 1), 0.5)))

            def forward(self, x):
                return self.conv(x) * self.scale
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_nn.register_parameter(self" in result.code and "mp_layers" not in result.code
    report = assert_port_matches(source, result.code, "Net", (2, 3, 8), tmp_path, "onealias", atol=1e-6)
    assert "scale" in report.mapping
