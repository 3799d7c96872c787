"""A class of the model's derived from a torch layer, built with arguments for which the layer's entry switches to
another Cell (``class CLeakyReLU(nn.LeakyReLU)`` built with ``inplace=True``: ``InplaceLeakyReLU``; a Conv2d
subclass with ``padding_mode='reflect'``: ``ModePaddedConv2d``; dcunet's complex U-Net): on main it raised
"a subclass can't become InplaceLeakyReLU"; now the subclass is put over the switched Cell, so its own methods
come first and ``super().forward(x)`` behaves as torch's layer does for those arguments."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class CLeakyReLU(nn.LeakyReLU):
        def forward(self, xr, xi):
            return F.leaky_relu(xr, self.negative_slope, self.inplace), F.leaky_relu(xi, self.negative_slope)


    class Doubled(nn.ReLU):
        def forward(self, x):
            y = super().forward(x)
            return x + y  # x was rectified in place: 2 * relu(x)


    class Reflected(nn.Conv2d):
        def forward(self, x):
            return super().forward(x) * 2


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = CLeakyReLU(0.1, inplace=True)
            self.twice = Doubled(inplace=True)
            self.conv = Reflected(2, 3, 3, padding=1, padding_mode="reflect")

        def forward(self, x):
            y = x * 1.0  # torch's input array stays as it is (the MindSpore side reads the same array)
            r, i = self.act(y, -y)
            return self.conv(r + i), self.twice(y * 1.0), y
""")


def test_subclasses_with_switched_arguments_match_torch(tmp_path):
    """PyNative: torch's in-place activations are PyNative's (GRAPH_MODE refuses a functional adapter's inplace
    argument given by a name, an unrelated limit)."""
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Model", [x], tmp_path, "switched", "pynative", atol=1e-5)


def test_the_subclass_keeps_its_name_and_class(tmp_path, monkeypatch):
    import importlib

    (tmp_path / "switched_names.py").write_text(convert_source(SOURCE).code)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("switched_names")
    from mindport.runtime.adapt import class_name

    act = module.CLeakyReLU(0.1, inplace=True)
    assert isinstance(act, module.CLeakyReLU) and class_name(act) == "CLeakyReLU"
    assert type(module.CLeakyReLU(0.1)) is module.CLeakyReLU  # the default arguments: the class itself


CONV = textwrap.dedent("""\
    import torch.nn as nn


    class Reflected(nn.Conv2d):
        def forward(self, x):
            return super().forward(x) * 2


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = Reflected(2, 3, 3, padding=1, padding_mode="reflect")

        def forward(self, x):
            return self.conv(x)
""")


def test_a_switched_subclass_compiles_in_graph_mode(tmp_path):
    """GRAPH_MODE finds ``super(Reflected, self)``'s class by name: the class put over ModePaddedConv2d is named
    apart (``Reflected_mp_ModePaddedConv2d``), so the base's construct is reached once."""
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(CONV, convert_source(CONV).code, "Model", [x], tmp_path, "switched_conv", "graph",
                                atol=1e-5)


NORM = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class WideNorm(nn.LayerNorm):  # its forward computes in float32 (cloneofsimo/minRF's Fp32LayerNorm)
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

        def forward(self, x):
            w = self.weight.float() if self.weight is not None else None
            b = self.bias.float() if self.bias is not None else None
            return F.layer_norm(x.float(), self.normalized_shape, w, b, self.eps).type_as(x)


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = WideNorm(6, bias=False)
            self.plain = WideNorm(6, elementwise_affine=False)
            self.proj = nn.Linear(6, 4)

        def forward(self, x):
            return self.proj(self.norm(x) + self.plain(x * 2.0))
""")


def test_a_switched_cell_whose_init_calls_super_builds(tmp_path):
    """``class WideNorm(nn.LayerNorm)`` built with ``bias=False`` switches to OptionalAffineLayerNorm, whose
    ``__init__`` calls ``super().__init__``: the instance was put over the switched Cell only after that call, which
    raised "super(type, obj): obj must be an instance or subtype of type" (the discovery sweep's rows 55+:
    cloneofsimo/minRF's SingleAttention did not build in MindSpore). Now it is put over it first; matches torch."""
    x = np.random.default_rng(2).standard_normal((2, 3, 6)).astype(np.float32)
    assert_port_matches_in_mode(NORM, convert_source(NORM).code, "Model", [x], tmp_path, "switched_norm", "pynative",
                                atol=1e-5)
