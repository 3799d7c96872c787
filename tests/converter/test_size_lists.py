"""torch's size arguments (kernel_size, stride, padding, dilation, output_padding, output_size) take any sequence, and
a one-element one is expanded to every dimension; MindSpore takes an int or a tuple of the full length and refuses the
rest ("When expanding an int number to tuple, input type must be integer or tuple[int], but got list"). EfficientNet-
PyTorch decodes its block arguments into lists (``stride=[1]``) and builds its convolutions through a subclass of
``nn.Conv2d`` (the runtime adapter's path): every block failed to build. Each case below is converted and run in both
frameworks: written in the source as literals, and passed at run time through a subclass, as that code does."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

# (layer construction as torch code, input shape)
CASES = [
    ("nn.Conv2d(3, 4, [3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1])", (2, 3, 9, 9)),
    ("nn.Conv2d(3, 4, 3, stride=[1], padding=[1], dilation=[1])", (2, 3, 7, 8)),
    ("nn.Conv2d(3, 4, 3, stride=(2,), padding=(1,), bias=False)", (1, 3, 9, 9)),
    ("nn.Conv1d(3, 4, [3], stride=[2], padding=[1])", (2, 3, 11)),
    ("nn.Conv3d(2, 3, [1, 3, 3], stride=[1, 2, 2], padding=[0, 1, 1])", (1, 2, 3, 6, 6)),
    ("nn.ConvTranspose2d(3, 2, [3, 3], stride=[2, 2], padding=[1, 1], output_padding=[1, 1])", (1, 3, 5, 5)),
    ("nn.MaxPool2d(kernel_size=[2, 2], stride=[2, 2])", (2, 3, 8, 8)),
    ("nn.AvgPool2d([3, 3], stride=[2, 2], padding=[1, 1])", (2, 3, 8, 8)),
    ("nn.AdaptiveAvgPool2d([2, 3])", (2, 3, 8, 9)),
    # lists built by an expression (PackNet's nn.ConstantPad2d(padding=[k // 2] * 4, value=0)): tuples
    ("nn.ConstantPad2d(padding=[3 // 2] * 4, value=0.5)", (1, 2, 5, 5)),
    ("nn.ZeroPad2d([p for p in (1, 2, 0, 1)])", (1, 2, 5, 5)),
    ("nn.ReflectionPad2d(4 * [1])", (1, 2, 5, 5)),
    ("nn.Conv2d(3, 4, kernel_size=[3] * 2, stride=2 * [1], dilation=[1 for _ in range(2)])", (1, 3, 8, 8)),
    ("nn.MaxPool2d(kernel_size=list((2, 2)), stride=[2] * 2)", (1, 3, 8, 8)),
]

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Conv2dFromLists(nn.Conv2d):
        def __init__(self, cin, cout, kernel_size, stride, **kwargs):
            super().__init__(cin, cout, kernel_size, stride, **kwargs)


    def built(i):
        return [{layers}][i]


    def from_lists(kernel, stride):
        return Conv2dFromLists(3, 4, kernel, stride, padding=[1], bias=False)
""")


def _source():
    return SOURCE.replace("{layers}", ", ".join(f"lambda: {code}" for code, _ in CASES))


def _compare(torch_layer, ms_layer, shape):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    transfer_weights(torch_layer.state_dict(), ms_layer)
    ms_layer.set_train(False)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = torch_layer.eval()(torch.from_numpy(x)).numpy()
    got = ms_layer(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    path = tmp_path_factory.mktemp("size_lists")
    code = convert_source(_source()).code
    return load_module(_source(), path / "t_sl.py", "t_sl"), load_module(code, path / "m_sl.py", "m_sl"), code


@pytest.mark.parametrize("i", range(len(CASES)), ids=[code for code, _ in CASES])
def test_literal_size_lists_match_torch(modules, i):
    torch_module, ms_module, code = modules
    _compare(torch_module.built(i)(), ms_module.built(i)(), CASES[i][1])


def test_the_converted_source_writes_tuples_and_ints(modules):
    code = modules[2]
    assert "kernel_size=(3, 3), stride=(2, 2)" in code and "kernel_size=3, stride=1," in code, code


@pytest.mark.parametrize("kernel,stride", [(3, [1]), ([3, 3], [2]), ((3, 3), (2, 2)), (3, [2, 1])])
def test_run_time_size_lists_through_a_subclass_match_torch(modules, kernel, stride):
    torch_module, ms_module, _ = modules
    _compare(torch_module.from_lists(kernel, stride), ms_module.from_lists(kernel, stride), (2, 3, 9, 10))


DISPLAYS = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F


    def run(x, w):
        h, k = x.shape[2:]
        return (F.avg_pool2d(x, kernel_size=[h, k], stride=[h, k]), F.max_pool2d(x, [h]),
                torch.var_mean(w, dim=[1, 2, 3], keepdim=True, unbiased=False)[0],
                torch.amax(x, dim=[h - 4, 3]), x.flip(dims=[2, 3]), torch.sum(w, [0, 2]))
""")


@pytest.mark.parametrize("seed", range(2))
def test_list_displays_of_sizes_and_dimensions_match_torch(tmp_path, seed):
    """``F.avg_pool2d(x, kernel_size=[h, w])`` (MobileOne's SE block) and ``torch.var_mean(w, dim=[1, 2, 3])``
    (BiT's weight standardisation): a list display of names becomes a tuple (a one-element size its element), a
    list of dimensions a tuple; MindSpore refused both lists."""
    import mindspore as ms
    import torch

    code = convert_source(DISPLAYS).code
    assert "kernel_size=(h, k)" in code and "dim=(1, 2, 3)" in code, code
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((2, 3, 4, 4)).astype(np.float32), rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    want = load_module(DISPLAYS, tmp_path / "t_ld.py", "t_ld").run(torch.from_numpy(x), torch.from_numpy(w))
    got = load_module(code, tmp_path / "m_ld.py", "m_ld").run(ms.Tensor(x), ms.Tensor(w))
    for g, t in zip(got, want, strict=True):
        assert g.shape == tuple(t.shape)
        np.testing.assert_allclose(g.asnumpy(), t.numpy(), rtol=1e-5, atol=1e-5)
