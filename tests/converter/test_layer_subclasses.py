"""Subclasses of torch's layers (``class ConvSame(nn.Conv2d)``, ``class Stack(nn.Sequential)``): module classes like
any nn.Module subclass (forward -> construct), and ``super().__init__`` with torch's positional arguments is mapped
through the layer's entry (the runtime adapter class's __init__), so the port matches torch."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches as _assert_port_matches, load_module as _load

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class ConvSame(nn.Conv2d):
        def __init__(self, cin, cout, k, stride=1, groups=1, bias=True):
            super(ConvSame, self).__init__(cin, cout, k, stride, 0, 1, groups, bias)

        def forward(self, x):
            return super().forward(F.pad(x, (1, 1, 1, 1)))


    class Wide(nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2


    class Stack(nn.Sequential):
        def __init__(self):
            super().__init__(ConvSame(3, 4, 3), nn.ReLU(), ConvSame(4, 4, 3, 2, groups=2, bias=False))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stack = Stack()
            self.head = Wide(4 * 4 * 4, 5)

        def forward(self, x):
            return self.head(torch.flatten(self.stack(x), 1))
""")


def test_subclasses_of_torch_layers_convert_and_match(tmp_path):
    result = convert_source(SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "def forward" not in result.code and "super(ConvSame, self).construct(" in result.code  # super(A, self): GRAPH_MODE reads super() as super(type(self), self)
    _assert_port_matches(SOURCE, result.code, "Net", (2, 3, 8, 8), tmp_path, "layers", atol=1e-5)


def test_settings_read_inside_an_isinstance_narrowing_take_mindspores_names(tmp_path):
    """An init loop over self.modules() reads m.groups of a Conv2d: MindSpore's Conv2d calls it group (the entry
    renames the argument without changing its value), so the port builds and initialises the same."""
    source = textwrap.dedent("""\
        import math
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(4, 8, 3, groups=2, bias=True)
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
                        m.weight.data.normal_(0, math.sqrt(2.0 / fan_out))
                        m.bias.data.fill_(0.5)
                        self.fan_out = fan_out
    """)
    result = convert_source(source)
    assert result.diagnostics == [] and "m.group\n" in result.code.replace(" // m.group", "m.group\n")
    torch_ns: dict = {}
    exec(compile(source, "t_narrow", "exec"), torch_ns)
    ms_net = _load(result.code, tmp_path / "m_narrow.py", "m_narrow").Net()
    assert ms_net.fan_out == torch_ns["Net"]().fan_out == 36
    np.testing.assert_array_equal(ms_net.conv.bias.asnumpy(), np.full(8, 0.5, np.float32))


def test_explicit_forward_calls_on_sub_modules_become_construct(tmp_path):
    source = textwrap.dedent("""\
        import torch.nn as nn


        class N(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 1)
                self.blocks = nn.ModuleList([nn.ReLU()])

            def forward(self, x):
                return self.blocks[0].forward(self.conv.forward(x))
    """)
    result = convert_source(source)
    assert ".forward(" not in result.code
    _assert_port_matches(source, result.code, "N", (1, 3, 4, 4), tmp_path, "fw", atol=1e-6)


def test_a_layer_subclass_reads_its_settings_under_mindspores_names(tmp_path):
    """class ConvSame(nn.Conv2d) calling F.conv2d with self.stride, self.dilation, self.groups: the port reads the
    same settings from the MindSpore layer (self.group) and gives torch's output."""
    source = textwrap.dedent("""\
        import torch.nn as nn
        import torch.nn.functional as F


        class ConvSame(nn.Conv2d):
            def forward(self, x):
                x = F.pad(x, (1, 1, 1, 1))
                return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = ConvSame(4, 6, 3, stride=2, groups=2)

            def forward(self, x):
                return self.conv(x)
    """)
    result = convert_source(source)
    assert "self.group)" in result.code, result.code
    _assert_port_matches(source, result.code, "Net", (1, 4, 7, 7), tmp_path, "cs", atol=1e-5)


def test_a_conv1d_subclass_convolves_with_its_own_weight(tmp_path):
    """class Conv1d(nn.Conv1d) whose forward perturbs or pads and calls F.conv1d(x, self.weight, ...) (the
    EfficientConformer layers): MindSpore's Conv1d keeps its weight as (out, in/groups, 1, k); the functional conv
    takes it as torch's (out, in/groups, k)."""
    source = textwrap.dedent("""\
        import torch.nn as nn
        import torch.nn.functional as F


        class CausalConv1d(nn.Conv1d):
            def __init__(self, cin, cout, k, groups=1):
                super().__init__(cin, cout, k, padding=0, groups=groups)
                self.pre = nn.ConstantPad1d((k - 1, 0), 0.0)

            def forward(self, x):
                weight = self.weight * 0.5
                return F.conv1d(self.pre(x), weight, bias=self.bias, stride=self.stride, groups=self.groups)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = CausalConv1d(4, 6, 3)
                self.b = CausalConv1d(6, 6, 5, groups=3)

            def forward(self, x):
                return self.b(self.a(x).relu())
    """)
    result = convert_source(source)
    _assert_port_matches(source, result.code, "Net", (2, 4, 11), tmp_path, "c1d", atol=1e-5)
