"""A layer built by calling a name bound to a layer class (``bn = nn.BatchNorm2d`` in one branch, ``nn.BatchNorm3d``
in another, then ``self.W = nn.Sequential(conv_nd(...), bn(c))``, batch 9a's Non-local blocks): its members read
under torch's names (``self.W[1].weight``) go through the run-time accessor, by the object's class; left as written
they raised ``'BatchNorm2d' object has no attribute 'weight'`` when the model was built."""
from __future__ import annotations

import textwrap
from functools import reduce

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches, load_module

SOURCE = textwrap.dedent("""\
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self, c=4, dimension=2):
            super().__init__()
            if dimension == 3:
                conv_nd = nn.Conv3d
                bn = nn.BatchNorm3d
            elif dimension == 2:
                conv_nd = nn.Conv2d
                bn = nn.BatchNorm2d
            else:
                conv_nd = nn.Conv1d
                bn = nn.BatchNorm1d
            self.W = nn.Sequential(conv_nd(c, c, 1), bn(c))
            nn.init.constant_(self.W[1].weight, 0.5)
            nn.init.constant_(self.W[1].bias, 0.25)
            self.bn = bn(c)
            nn.init.constant_(self.bn.weight, 2.0)
            self.bn.bias.data.fill_(-1.0)

        def forward(self, x):
            return self.bn(self.W(x))


    class Block3d(Block):
        def __init__(self):
            super().__init__(4, 3)


    def make(dims, c):
        norm = nn.BatchNorm2d if dims == 2 else nn.BatchNorm1d
        layer = norm(c)
        nn.init.constant_(layer.weight, 3.0)
        return layer
    """)


@pytest.mark.parametrize("cls, shape, gamma", [("Block", (2, 4, 3, 3), "gamma"),
                                               ("Block3d", (2, 4, 2, 3, 3), "bn2d.gamma")])
def test_members_of_a_layer_built_from_a_class_held_by_a_name(tmp_path, cls, shape, gamma):
    result = convert_source(SOURCE, "model.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    ms_module = load_module(result.code, tmp_path / f"m_names_{cls}.py", f"m_names_{cls}")
    ms_net = getattr(ms_module, cls)()  # raised AttributeError: 'BatchNorm2d' object has no attribute 'weight'
    torch_net = getattr(load_module(SOURCE, tmp_path / f"t_names_{cls}.py", f"t_names_{cls}"), cls)()
    for ms_layer, torch_layer in ((ms_net.W[1], torch_net.W[1]), (ms_net.bn, torch_net.bn)):
        got = reduce(getattr, gamma.split("."), ms_layer).asnumpy()
        np.testing.assert_array_equal(got, torch_layer.weight.detach().numpy())
        beta = reduce(getattr, gamma.replace("gamma", "beta").split("."), ms_layer).asnumpy()
        np.testing.assert_array_equal(beta, torch_layer.bias.detach().numpy())
    want = load_module(SOURCE, tmp_path / f"t_make_{cls}.py", f"t_make_{cls}").make(2, 4)  # a function's local
    np.testing.assert_array_equal(ms_module.make(2, 4).gamma.asnumpy(), want.weight.detach().numpy())
    assert_port_matches(SOURCE, result.code, cls, shape, tmp_path, f"names_{cls}", 1e-5)


PARTIAL = textwrap.dedent("""\
    from functools import partial

    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            norm_layer = partial(nn.LayerNorm, eps=1e-6)
            self.norm = norm_layer(dim)
            nn.init.constant_(self.norm.weight, 2.0)
            self.extra = nn.Sequential(norm_layer(dim))
            nn.init.constant_(self.extra[0].bias, 0.5)

        def forward(self, x):
            return self.extra(self.norm(x))
    """)


def test_members_of_a_layer_built_from_a_partial_of_a_layer_class(tmp_path):
    """``norm_layer = partial(nn.LayerNorm, eps=1e-6)`` (the ConvNeXt/ViT style): the LayerNorm's weight and bias
    are MindSpore's gamma and beta."""
    result = convert_source(PARTIAL, "model.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    ms_net = load_module(result.code, tmp_path / "m_partial.py", "m_partial").Block()
    torch_net = load_module(PARTIAL, tmp_path / "t_partial.py", "t_partial").Block()
    np.testing.assert_array_equal(ms_net.norm.gamma.asnumpy(), torch_net.norm.weight.detach().numpy())
    np.testing.assert_array_equal(ms_net.extra[0].beta.asnumpy(), torch_net.extra[0].bias.detach().numpy())
    assert_port_matches(PARTIAL, result.code, "Block", (2, 3, 4), tmp_path, "partial_norm", 1e-5)
