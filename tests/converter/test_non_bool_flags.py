"""A layer's ``bias`` given something that is not a bool (batch 8's DBPN: ``DeconvBlock(num_filter, num_filter,
kernel_size, stride, padding, activation, norm=None)`` puts 'prelu', the sixth positional argument, in ``bias``):
torch only tests ``if bias:``, MindSpore's ``has_bias`` must be a bool ("For 'Conv2dTranspose', the 'has_bias' must
be a bool, but got str"). Where some call of the file passes a string or a number (or a parameter whose default is
one) to the parameter handed on as ``bias``, it is written ``has_bias=bool(bias)``; elsewhere ``has_bias=bias``."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class DeconvBlock(nn.Module):
        def __init__(self, input_size, output_size, kernel_size=4, stride=2, padding=1, bias=True, activation='prelu'):
            super().__init__()
            self.deconv = nn.ConvTranspose2d(input_size, output_size, kernel_size, stride, padding, bias=bias)
            self.act = nn.PReLU()

        def forward(self, x):
            return self.act(self.deconv(x))


    class Plain(nn.Module):
        def __init__(self, bias=True):
            super().__init__()
            self.fc = nn.Linear(4, 4, bias=bias)

        def forward(self, x):
            return self.fc(x)


    class UpBlock(nn.Module):
        def __init__(self, num_filter=3, kernel_size=4, stride=2, padding=1, bias=True, activation='prelu'):
            super().__init__()
            self.up = DeconvBlock(num_filter, num_filter, kernel_size, stride, padding, activation)
            self.off = DeconvBlock(num_filter, num_filter, kernel_size, stride, padding, False)
            self.plain = Plain(bias=False)

        def forward(self, x):
            return self.up(x) + self.off(x)
""")


def test_a_string_landing_in_bias_is_its_truth(tmp_path):
    code = convert_source(SOURCE).code
    assert "has_bias=bool(bias)" in code, code  # DeconvBlock: a call passes 'prelu' there
    assert "out_channels=4, has_bias=bias" in code, code  # Plain: only bools reach it
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(SOURCE, code, "UpBlock", [x], tmp_path, f"nonbool_{mode}", mode)


OWN_DEFAULT = textwrap.dedent("""\
    import torch.nn as nn


    class ConvCell(nn.Module):
        def __init__(self, c=3, hidden=4, bias=1):
            super().__init__()
            self.bias = bias
            self.conv = nn.Conv2d(c, hidden, 3, padding=1, bias=self.bias)
            self.fc = nn.Linear(hidden, 2, bias=bias)

        def forward(self, x):
            return self.fc(self.conv(x).mean((2, 3)))
""")


def test_a_number_a_parameter_defaults_to_stored_on_self_then_given_as_bias(tmp_path):
    """PhyDNet's ``def __init__(..., bias=1)``: ``self.bias = bias``, then ``nn.Conv2d(..., bias=self.bias)``
    ("For 'Conv2d', the 'has_bias' must be a bool, but got int")."""
    code = convert_source(OWN_DEFAULT).code
    assert "has_bias=bool(self.bias)" in code and "has_bias=bool(bias)" in code, code
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    for mode in ("pynative", "graph"):
        assert_port_matches_in_mode(OWN_DEFAULT, code, "ConvCell", [x], tmp_path, f"own_default_{mode}", mode)


FLAGS = textwrap.dedent("""\
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, c=3, affine=1):
            super().__init__()
            self.norm = nn.GroupNorm(1, c, affine=affine)
            self.bn = nn.BatchNorm2d(c, affine=1)
            self.loss = nn.TripletMarginWithDistanceLoss(swap=1)

        def forward(self, x):
            y = self.bn(self.norm(x))
            return y + self.loss(x[0, 0], y[1, 0], x[1, 0])
""")


def test_other_bool_only_flags_given_numbers(tmp_path):
    """affine and swap given 1 (a literal, or a parameter defaulting to one): MindSpore's normalisation layers and
    TripletMarginWithDistanceLoss refuse an int there ("For 'GroupNorm', the 'affine' must be a bool")."""
    code = convert_source(FLAGS).code
    assert "affine=bool(affine)" in code and "affine=True" in code and "swap=True" in code, code
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert_port_matches_in_mode(FLAGS, code, "Net", [x], tmp_path, "flags_pynative", "pynative")


def test_every_bool_only_layer_flag_is_listed():
    """Every torch layer entry's example built with each of its bool-defaulting arguments given 1: where torch
    builds and runs it and MindSpore's layer refuses the int for not being a bool, the argument is in
    BOOL_FLAG_NAMES."""
    import inspect
    import re
    import warnings

    import torch

    from mindport.proofs.function import make_input

    from mindport.mappings import load_registry
    from mindport.migrator.rules.table_calls import BOOL_FLAG_NAMES
    from mindport.runtime import adapt

    refused = set()
    for entry in load_registry():
        if entry.kind != "layer" or not entry.supported or not entry.example or not entry.targets.get("nn"):
            continue
        try:
            layer = adapt.api(entry.torch)
            signature = inspect.signature(eval(entry.torch).__init__)
        except Exception:  # noqa: BLE001  (no nn target, or a class of another package: timm's)
            continue
        for name in (n for n, p in signature.parameters.items() if isinstance(p.default, bool)):
            args = f"{entry.example.args}, {name}=1" if entry.example.args else f"{name}=1"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:  # built and called: torch's pooling refuses an int ceil_mode in forward
                    inputs = {k: torch.from_numpy(np.asarray(make_input(v, np.random.default_rng(0))))
                              for k, v in entry.example.inputs.items()}
                    eval(f"{entry.torch}({args})({entry.example.call or ', '.join(inputs)})", {"torch": torch},
                         inputs)
                except Exception:  # noqa: BLE001  (torch refuses it too: not a flag torch tests for truth)
                    continue
                try:
                    eval(f"layer({args})")
                except Exception as exc:  # noqa: BLE001
                    if re.search(r"must be (a )?bool|should be 'bool'", str(exc)):
                        refused.add((entry.torch, name))
    assert refused, "the measure found nothing: the check itself is broken"
    assert {name for _, name in refused} <= BOOL_FLAG_NAMES, sorted(refused)
