"""Layers with size arguments (Conv*, *Pool*, pads: kernel_size, stride, padding, dilation, output_padding,
output_size) whose values arrive only at run time, through the converter's native forms of a torch layer class that
is not called where the converter sees the arguments: a value class (``dict(max=nn.MaxPool2d)``, ``class
Conv2dSame(nn.Conv2d)`` with an ``__init__`` of its own -> ``TorchConv2d``), a factory (``nn.Conv2d(*args,
**kwargs)`` -> ``make_conv2d``) and a native base (``class PlainPool(nn.MaxPool2d)`` with no ``__init__``). torch takes
a size as any sequence (a list, a one-element list expanded to every dimension) and takes numpy integers wherever it
takes an int; MindSpore refuses lists, one-element sizes of a 2-d layer and numpy integers. Each form reads its
arguments as the runtime adapter does, by the adapter's own code (mindport.runtime.adapt.layer_sizes). Each case is
built in both frameworks from the same run-time values and run (real torch, real MindSpore), weights transferred."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    LAYERS = {"max": nn.MaxPool2d, "avg": nn.AvgPool2d, "adaptive": nn.AdaptiveAvgPool2d, "conv1d": nn.Conv1d,
              "deconv": nn.ConvTranspose2d, "conv": nn.Conv2d, "pad": nn.ZeroPad2d}


    class Conv2dSame(nn.Conv2d):
        def __init__(self, cin, cout, kernel_size, stride=1, **kwargs):
            super().__init__(cin, cout, kernel_size, stride, **kwargs)


    def build(kind, *args, **kwargs):
        if kind == "subclass":
            return Conv2dSame(*args, **kwargs)
        return LAYERS[kind](*args, **kwargs)
""")

# a file with no value class of Conv2d: a subclass with no __init__ gets MindSpore's class as its base and an
# __init__ taking torch's parameters (factories.base_init); a call with *args a factory (factories.factory_def)
PLAIN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class PlainPool(nn.MaxPool2d):
        pass


    def conv(*args, **kwargs):
        return nn.Conv2d(*args, **kwargs)


    def build(kind, *args, **kwargs):
        return PlainPool(*args, **kwargs) if kind == "plain" else conv(*args, **kwargs)
""")

i64 = np.int64
# (kind, args, kwargs, input shape): the values as they arrive at run time (decoded block strings, numpy arithmetic)
CASES = [
    ("subclass", (3, 4, 3), dict(stride=[2], padding=[1], bias=False), (2, 3, 9, 10)),
    ("subclass", (i64(3), i64(4), i64(3)), dict(stride=[i64(2), i64(1)], padding=(i64(1),)), (1, 3, 8, 9)),
    ("plain", ([3, 3],), dict(stride=[1], padding=[1], dilation=[2]), (2, 3, 9, 9)),
    ("plain", ((i64(3), 3),), dict(stride=i64(2), padding=(1,)), (1, 3, 9, 9)),
    ("factory", (3, 4, [3, 1]), dict(stride=[2, 1], padding=[1, 0]), (1, 3, 9, 9)),
    ("factory", (3, i64(2), [i64(3)] * 2), dict(padding=[i64(1)]), (1, 3, 7, 7)),
    ("conv", (3, 4, [3, 3]), dict(stride=[2], padding=[1]), (1, 3, 8, 8)),
    ("max", ([3],), dict(stride=[2], padding=[1]), (2, 3, 9, 9)),
    ("max", ([i64(2), i64(2)],), dict(stride=i64(2)), (1, 3, 8, 8)),
    ("avg", ([3, 3],), dict(stride=[i64(2)], padding=[1, 1]), (2, 3, 9, 9)),
    ("adaptive", ([i64(2), 3],), {}, (1, 3, 8, 9)),
    ("conv1d", (i64(3), 4, [3]), dict(stride=[2], padding=[1]), (2, 3, 11)),
    ("deconv", (3, 2, [3, 3]), dict(stride=[2], padding=[1], output_padding=[1]), (1, 3, 5, 5)),
    ("pad", ([i64(1), 2, 0, 1],), {}, (1, 2, 5, 5)),
]


def _ids():
    return [f"{kind}-{i}" for i, (kind, *_) in enumerate(CASES)]


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    path = tmp_path_factory.mktemp("size_values")
    out = {}
    for name, source in (("sv", SOURCE), ("plain", PLAIN)):
        code = convert_source(source).code
        out[name] = load_module(source, path / f"t_{name}.py", f"t_{name}"), \
            load_module(code, path / f"m_{name}.py", f"m_{name}"), code
    return out


def test_the_layers_are_native_value_classes_factories_and_bases(modules):
    code = modules["sv"][2]
    for made in ("class TorchConv2d(nn.Conv2d", "class TorchMaxPool2d(nn.MaxPool2d", "class Conv2dSame(TorchConv2d)",
                 "class TorchAdaptiveAvgPool2d(nn.AdaptiveAvgPool2d", "mp_adapt.layer_sizes("):
        assert made in code, (made, code)
    for torch_name in ("Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"):  # the others' targets are runtime
        assert f'mp_adapt.api("torch.nn.{torch_name}")' not in code, code  # classes: they keep the adapter
    plain = modules["plain"][2]
    assert "mp_adapt.api(" not in plain and "class PlainPool(nn.MaxPool2d)" in plain and "def make_conv2d(" in plain \
        and "mp_adapt.layer_sizes(" in plain, plain


@pytest.mark.parametrize("i", range(len(CASES)), ids=_ids())
def test_run_time_sizes_match_torch(modules, i):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    kind, args, kwargs, shape = CASES[i]
    torch_module, ms_module, _ = modules["plain" if kind in ("plain", "factory") else "sv"]
    torch_layer = torch_module.build(kind, *args, **kwargs)
    ms_layer = ms_module.build(kind, *args, **kwargs)
    assert isinstance(ms_layer, ms.nn.Cell)
    if kind in ("max", "avg", "adaptive", "conv", "factory"):
        # MindSpore's own layer (the value class's call builds it: no adapter class in between)
        assert type(ms_layer).__module__.startswith("mindspore."), type(ms_layer)
    transfer_weights(torch_layer.state_dict(), ms_layer)
    ms_layer.set_train(False)
    x = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = torch_layer.eval()(torch.from_numpy(x)).numpy()
    got = ms_layer(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
