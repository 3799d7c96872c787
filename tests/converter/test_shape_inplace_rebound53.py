"""A shape-changing in-place update (``squeeze_``, ``unsqueeze_``) of a name whose tensor nothing else holds, in a
loop: glow's ``thops.sum`` (trials glow/flownet_invconv), ``for d in dim: tensor = tensor.sum(dim=d, keepdim=True)``
then ``for i, d in enumerate(dim): tensor.squeeze_(d - i)``, and a local rebound by an operator in the loop that
updates it. The runtime's squeeze_/unsqueeze_ change the object's shape in PyNative and raise in a graph (a graph
cannot change a tensor's shape in place); the class is an update that no other holder of the object can see, so
``x = x.squeeze(d)`` is the same program:

* in a loop: every read of the name in the loop around the update keeps no reference (operands, ``.shape``, a
  reduction's receiver), as before the update outside loops;
* on a parameter: its own value (the caller's tensor) never reaches the update: a top-level loop over a list
  ``L`` (``L = sorted(...)``) rebinds it to a new tensor in every step before a loop over ``L`` / ``enumerate(L)``
  holds the update, so when the parameter's value is still bound, neither loop took a step. Such a helper writes
  none of its caller's tensors, so ArgumentWriteTransform says nothing (it said MP107 before).

Where that is not proven (the update's loop runs over another list, a list holding the tensor in the loop) the
runtime's in-place call stays, with torch's meaning. Fails before (mindport's RuntimeError in the graph)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def reduce_dims(tensor, dims=None, keep=False):
        if dims is None:
            return torch.sum(tensor)
        if isinstance(dims, int):
            dims = [dims]
        dims = sorted(dims)
        for d in dims:
            tensor = tensor.sum(dim=d, keepdim=True)
        if not keep:
            for i, d in enumerate(dims):
                tensor.squeeze_(d - i)
        return tensor


    def mean_dims(tensor, dims=None, keep=False):
        if dims is None:
            return torch.mean(tensor)
        else:
            dims = sorted(dims)
            for d in dims:
                tensor = tensor.mean(dim=d, keepdim=True)
            if not keep:
                for i, d in enumerate(dims):
                    tensor.squeeze_(d - i)
            return tensor


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x):
            h = self.conv(x)
            s = reduce_dims(h, dims=[3, 1])
            t = reduce_dims(h * h, dims=2, keep=True) + mean_dims(h, dims=[2, 3]).sum()
            feats = h * 2
            for k in range(2):
                feats = feats + float(feats.shape[1])
                feats.unsqueeze_(1)
            return s, t, feats, h
""")

UNPROVEN = textwrap.dedent("""\
    import torch


    def other_list(tensor, dims, more):
        dims = sorted(dims)
        for d in dims:
            tensor = tensor.sum(dim=d, keepdim=True)
        for d in more:
            tensor.squeeze_(d)
        return tensor


    def kept(x):
        seen = []
        y = x * 2
        for k in range(2):
            seen.append(y)
            y.unsqueeze_(0)
        return seen
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_shape_inplace_rebound_in_graph(tmp_path, mode):
    result = convert_source(SOURCE)
    code = result.code
    assert code.count("tensor = tensor.squeeze(axis=d - i)") == 2, code
    assert "feats = feats.unsqueeze(1)" in code, code
    assert "mp_inplace" not in code and "MP107" not in code, code
    x = np.random.default_rng(5).standard_normal((2, 3, 6, 5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "shape53", mode, rtol=1e-5, atol=1e-5)


def test_unproven_updates_keep_the_runtime():
    code = convert_source(UNPROVEN).code
    assert "tensor = tensor.squeeze" not in code and "mp_inplace.squeeze_(tensor" in code, code
    assert "y = y.unsqueeze" not in code and "mp_inplace.unsqueeze_(y" in code, code
