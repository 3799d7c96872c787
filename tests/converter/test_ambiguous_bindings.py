"""A name bound to different things in one scope: a parameter that a torch class replaces when it is None
(``if norm_layer is None: norm_layer = nn.BatchNorm2d``, as every copy of torchvision's ResNet writes it), or an alias
bound to one torch function on one branch and another on the other. Which binding a read sees is known only at run
time. Before, the last binding won everywhere: ``if norm_layer is None`` became ``if mp_adapt.api(...) is None`` and
``self._norm_layer = norm_layer`` stored BatchNorm2d whatever the caller passed (DeepLabV3's ResNet backbone failed
with ``'NoneType' object is not callable``; a caller's own norm layer was silently replaced). Now no read of such a
name is torch's: the alias values are rewritten (to the runtime adapter, which maps the arguments of each call), the
reads and calls are left as written."""
from __future__ import annotations

import textwrap

import pytest

from mindport import convert_source
from port_check import assert_port_matches, load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Halve(nn.Module):
        def __init__(self, planes):
            super().__init__()
            self.planes = planes

        def forward(self, x):
            return x * 0.5


    class Block(nn.Module):
        def __init__(self, planes=3, norm_layer=None, smooth=False):
            super().__init__()
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            self._norm_layer = norm_layer
            self.conv = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn = norm_layer(planes)
            if smooth:
                act = F.gelu
            else:
                act = F.relu
            self.act = act

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))


    def default_block():
        return Block()


    def own_norm_block():
        return Block(norm_layer=Halve, smooth=True)
""")


def test_reads_of_the_name_are_left_as_written():
    code = convert_source(SOURCE).code
    # the layer class bound by name is the file's value class (native26), no run-time binding
    assert "if norm_layer is None:\n            norm_layer = TorchBatchNorm2d\n" in code and "mp_adapt" not in code, code
    assert "self._norm_layer = norm_layer\n" in code and "self.bn = norm_layer(planes)\n" in code, code
    assert "self.act = act\n" in code, code


@pytest.mark.parametrize("make", ["default_block", "own_norm_block"])
def test_the_port_uses_what_the_caller_passed_and_matches_torch(tmp_path, make):
    code = convert_source(SOURCE).code
    assert_port_matches(SOURCE, code, make, (2, 3, 5, 5), tmp_path, f"ab_{make}", atol=1e-6)
    ms_net = getattr(load_module(code, tmp_path / f"m_ab_{make}_built.py", f"m_ab_{make}_built"), make)()
    assert type(ms_net._norm_layer).__name__ != "NoneType"
    assert (ms_net.bn.__class__.__name__ == "Halve") == (make == "own_norm_block")
