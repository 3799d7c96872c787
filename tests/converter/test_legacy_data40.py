"""A legacy constructor given one list or tuple display of Python numbers by construction (MaxViT's dropsample
``torch.FloatTensor((x.shape[0], 1, 1, 1), device = device).uniform_() > self.prob``, ``torch.LongTensor([x.size(1), 2, -1])``) is
MindSpore's ``ms.Tensor(display, dtype)`` (TableCallTransform._data_constructor): torch reads a sequence as data,
never as sizes, and copies it into a new tensor of the class's dtype; that new tensor is one nothing else holds, so
an in-place draw or fill of it is MindSpore's own out-of-place value (_fresh_receiver). Data that may hold a tensor
(``[x.sum()]``), a float literal for an integer class, a torch.Size (sizes) keep the runtime constructor. The
converted module runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Legacy(nn.Module):
        def forward(self, x):
            keep = torch.FloatTensor((x.shape[0], 1, 1, 1)).uniform_() < 2.0
            kept = torch.FloatTensor((x.shape[0], 1, 1, 1), device = x.device).uniform_() > -1.0
            ints = torch.LongTensor([x.size(1), 2, -1])
            floats = torch.Tensor([1.5, len(x), x.shape[-1] * 2])
            doubles = torch.DoubleTensor((-0.25, x.shape[0] // 2))
            return keep, kept, ints, floats, doubles
""")

KEPT = textwrap.dedent("""
    import torch


    def kept(x):
        return torch.LongTensor([1.5]), torch.FloatTensor([x.sum()]), torch.FloatTensor(x.shape)
""")


def test_number_displays_are_mindspore_tensors_and_others_stay():
    code = convert_source(SOURCE).code
    assert "mp_tensor" not in code and "mp_inplace" not in code, code
    assert code.count("ops.rand_like(ms.Tensor((x.shape[0], 1, 1, 1), ms.float32))") == 2, code
    assert "ms.Tensor([x.shape[1], 2, -1], ms.int64)" in code, code
    kept = convert_source(KEPT).code
    assert kept.count("mp_tensor.") == 3, kept


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_number_displays_match_torch(mode, tmp_path):
    import mindspore as ms
    import torch

    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    x = np.zeros((6, 4, 5), np.float32)
    want = load_module(SOURCE, tmp_path / "t_legacy.py", "t_legacy").Legacy()(torch.from_numpy(x))
    net = load_module(result.code, tmp_path / f"m_legacy_{mode}.py", f"m_legacy_{mode}").Legacy()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = net(ms.Tensor(x))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).lower().replace("bool_", "bool") == str(w.dtype).rpartition(".")[2]
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
