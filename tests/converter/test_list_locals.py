"""Sizes held in a local list (batch 6, Qualcomm's BC-ResNet): ``rate = []`` grown per dimension, then
``nn.Conv2d(..., kernel_size, stride, padding, rate, groups)``. torch takes a list as a size; MindSpore's layers refuse
one ("When expanding an int number to tuple, input type must be integer or tuple[int], but got list"). A size or
dimensions argument given by a local name that may hold a list is written ``tuple(x) if isinstance(x, list) else x``
(a convolution's or pool's kernel_size, stride, dilation: a one-element list as its element, which torch expands);
the port matches torch with either kind of value."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, kernel_size=(3, 3), dilated=True, pool=[2, 1]):
            super().__init__()
            if isinstance(kernel_size, (list, tuple)):
                rate = []
                padding = []
                for k in kernel_size:
                    rate.append(2 if dilated and k > 1 else 1)
                    padding.append(rate[-1] * (k - 1) // 2)
            else:
                rate, padding = 1, (kernel_size - 1) // 2
            self.conv = nn.Conv2d(3, 4, kernel_size, 1, padding, rate, bias=False)
            self.pool = nn.MaxPool2d(pool, stride=pool)

        def forward(self, x):
            dims = [2, 3]
            return self.pool(self.conv(x)), self.conv(x).mean(dim=dims)
""")


@pytest.mark.parametrize("args", [(), ((3, 1),), (3, False)])
def test_local_lists_as_sizes_convert_and_match(tmp_path, args):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    assert "dilation=((rate[0] if len(rate) == 1 else tuple(rate)) if isinstance(rate, list) else rate)" in code, code
    name = "_".join(str(a) for a in args).replace(" ", "").replace(",", "").replace("(", "").replace(")", "") or "d"
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    torch_net = load_module(SOURCE, tmp_path / f"t_ll_{name}.py", f"t_ll_{name}").Block(*args)
    ms_net = load_module(code, tmp_path / f"m_ll_{name}.py", f"m_ll_{name}").Block(*args)
    ms_net.conv.weight.set_data(ms.Tensor(torch_net.conv.weight.detach().numpy().reshape(ms_net.conv.weight.shape)))
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x))
    got = ms_net(ms.Tensor(x))
    for w, g in zip(want, got):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-5)


CALLED_WITH_LISTS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class ConvUnit(nn.Module):
        def __init__(self, cin, cout, kernel_size, stride=(1, 1)):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, kernel_size, stride=stride, padding=0)

        def forward(self, x):
            return self.conv(x)


    class Head(nn.Module):
        def __init__(self, dims=(3, 4, 5)):
            super().__init__()
            window = [3, 1]
            self.units = nn.ModuleList([ConvUnit(cin, cout, kernel_size=[1, 1], stride=[1, 1])
                                        for cin, cout in zip(dims[:-1], dims[1:])])
            self.wide = ConvUnit(dims[-1], 2, window, [2, 1])

        def forward(self, x):
            for unit in self.units:
                x = unit(x)
            return self.wide(x)
""")


def test_sizes_a_call_passes_as_lists_convert_and_match(tmp_path):
    """GMAN's FC builds its 1x1 convolutions with ``conv2d_(..., kernel_size=[1, 1], stride=[1, 1])``, a class of
    the file that hands both to ``nn.Conv2d``: the parameter a call passes a list to is a list local of the callee."""
    import mindspore as ms
    import torch

    code = convert_source(CALLED_WITH_LISTS).code
    assert "kernel_size=((kernel_size[0] if len(kernel_size) == 1 else tuple(kernel_size)) if isinstance(kernel_size, list) else kernel_size)" in code, code
    assert "stride=((stride[0] if len(stride) == 1 else tuple(stride)) if isinstance(stride, list) else stride)" in code, code
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 5)).astype(np.float32)
    torch_net = load_module(CALLED_WITH_LISTS, tmp_path / "t_cl.py", "t_cl").Head()
    ms_net = load_module(code, tmp_path / "m_cl.py", "m_cl").Head()
    for name, p in torch_net.named_parameters():
        target = dict(ms_net.parameters_and_names())[name]
        target.set_data(ms.Tensor(p.detach().numpy()))
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    got = ms_net(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape == (2, 2, 2, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


PAD_SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Pads(nn.Module):
        def __init__(self, k=3):
            super().__init__()
            pad = [k // 2] * 4
            self.pad = nn.ConstantPad2d(pad, 0.5)
            edges = [1, 0, 2, 1]
            self.zero = nn.ZeroPad2d(padding=edges)
            stride = 2 * [2]
            self.pool = nn.MaxPool2d(2, stride=stride)

        def forward(self, x):
            return self.pool(self.zero(self.pad(x)))
""")


def test_local_lists_as_padding_and_repeated_lists_convert_and_match(tmp_path):
    """PackNet's padding held in a list: a pad layer's padding has no transform that takes a list (a
    convolution's does), and ``[k // 2] * 4`` is a list as a display is."""
    import mindspore as ms
    import torch

    code = convert_source(PAD_SOURCE).code
    # a padding held in a name may be negative: the runtime's pad layer (legacy15: MindSpore's ops.pad crops wrongly)
    assert "mp_nn.ConstantPad2d(padding=pad, value=0.5)" in code, code
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 6)).astype(np.float32)
    with torch.no_grad():
        want = load_module(PAD_SOURCE, tmp_path / "t_pads.py", "t_pads").Pads()(torch.from_numpy(x)).numpy()
    got = load_module(code, tmp_path / "m_pads.py", "m_pads").Pads()(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


REPEAT_SOURCE = textwrap.dedent("""\
    import torch


    def gather(points, idx):
        B = points.shape[0]
        view_shape = list(idx.shape)
        view_shape[1:] = [1] * (len(view_shape) - 1)
        repeat_shape = list(idx.shape)
        repeat_shape[0] = 1
        batch_indices = torch.arange(B, dtype=torch.long).view(view_shape).repeat(repeat_shape)
        reps = [1, 2] + [1]
        return points[batch_indices, idx, :], points.repeat(reps), points.repeat([2] * 3), points.tile(repeat_shape)
""")


def test_local_lists_as_repeats_convert_and_match(tmp_path):
    """CurveNet's index_points: ``.repeat(repeat_shape)`` after ``repeat_shape = list(idx.shape)``, and a repeat
    count built as ``[2] * 3``. MindSpore's ``tile`` refuses a list ("Failed calling tile with tile(List<int, int>)")."""
    import mindspore as ms
    import torch

    code = convert_source(REPEAT_SOURCE).code
    assert ".tile((tuple(repeat_shape) if isinstance(repeat_shape, list) else repeat_shape))" in code, code
    rng = np.random.default_rng(2)
    points = rng.standard_normal((2, 5, 3)).astype(np.float32)
    idx = rng.integers(0, 5, (2, 4)).astype(np.int64)
    want = load_module(REPEAT_SOURCE, tmp_path / "t_rep.py", "t_rep").gather(torch.from_numpy(points),
                                                                          torch.from_numpy(idx))
    got = load_module(code, tmp_path / "m_rep.py", "m_rep").gather(ms.Tensor(points), ms.Tensor(idx))
    for w, g in zip(want, got):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=1e-6)


STORED_ON_SELF = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Unit3D(nn.Module):
        def __init__(self, cin, cout, kernel_shape=(1, 1, 1), stride=(1, 1, 1)):
            super().__init__()
            self._kernel_shape = kernel_shape
            self._stride = stride
            self.conv3d = nn.Conv3d(cin, cout, kernel_size=self._kernel_shape, stride=self._stride, padding=0)

        def forward(self, x):
            return self.conv3d(x)


    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Unit3D(2, 3, kernel_shape=[1, 1, 1])
            self.b = Unit3D(3, 4, kernel_shape=[3, 3, 3], stride=[1, 2, 2])

        def forward(self, x):
            return self.b(self.a(x))
""")


def test_sizes_stored_on_self_from_list_arguments_convert_and_match(tmp_path):
    """pytorch-i3d's Unit3D: ``self._kernel_shape = kernel_shape`` then ``nn.Conv3d(..., kernel_size=
    self._kernel_shape)``, each call of the file passing ``kernel_shape=[3, 3, 3]``: MindSpore's Conv3d refused the
    list ("the type of 'kernel_size' should be one of '['int', 'tuple']', but got type 'list'"); the attribute the
    function stores a list-holding parameter on is read as that parameter is."""
    import mindspore as ms
    import torch

    code = convert_source(STORED_ON_SELF).code
    assert "tuple(self._kernel_shape)) if isinstance(self._kernel_shape, list) else self._kernel_shape)" in code, code
    x = np.random.default_rng(2).standard_normal((1, 2, 4, 6, 6)).astype(np.float32)
    torch_net = load_module(STORED_ON_SELF, tmp_path / "t_ss.py", "t_ss").Mixed()
    ms_net = load_module(code, tmp_path / "m_ss.py", "m_ss").Mixed()
    for name, p in torch_net.named_parameters():
        dict(ms_net.parameters_and_names())[name].set_data(ms.Tensor(p.detach().numpy()))
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    got = ms_net(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape == (1, 4, 2, 2, 2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
