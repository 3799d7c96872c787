"""A ``functools.partial`` built in a model's builder method (not ``__init__``, not ``forward``) and given to a
sub-module's constructor, which keeps it and calls it in ``forward`` (video-classification-3d-cnn's type-A shortcut:
``downsample = partial(downsample_basic_block, planes=..., stride=...)`` in ``_make_layer``, then
``block(..., downsample)``). functools' object held by two instances of one Cell class broke the static graph
("Graph cycle exists" in a BatchNorm3d); the converter writes the runtime's graph-compiled partial there. The port
matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    from functools import partial

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def pad_shortcut(x, planes, stride):
        out = F.avg_pool3d(x, kernel_size=1, stride=stride)
        pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3), out.size(4))
        return torch.cat([out, pads], dim=1)


    class Block(nn.Module):
        def __init__(self, cin, cout, stride=1, shortcut=None):
            super().__init__()
            self.conv = nn.Conv3d(cin, cout, 1, stride=stride, bias=False)
            self.bn = nn.BatchNorm3d(cout)
            self.shortcut = shortcut

        def forward(self, x):
            out = self.bn(self.conv(x))
            residual = x
            if self.shortcut is not None:
                residual = self.shortcut(x)
            return torch.relu(out + residual)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.cin = 4
            self.layer1 = self._make_layer(8, 2)
            self.layer2 = self._make_layer(8, 1)
            self.layer3 = self._make_layer(16, 2)

        def _make_layer(self, planes, stride):
            shortcut = None
            if stride != 1 or self.cin != planes:
                shortcut = partial(pad_shortcut, planes=planes, stride=stride)
            block = Block(self.cin, planes, stride, shortcut)
            self.cin = planes
            return block

        def forward(self, x):
            return self.layer3(self.layer2(self.layer1(x)))
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_partial_given_to_a_sub_module_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "shortcut = mp_graph_safe.partial(pad_shortcut, planes=planes, stride=stride)" in code
    x = np.random.default_rng(0).standard_normal((2, 4, 8, 8, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "handed", mode, rtol=1e-4, atol=1e-5)


def test_a_partial_given_to_a_builtin_or_a_method_is_left():
    source = textwrap.dedent("""\
        from functools import partial

        import torch.nn as nn


        def init(m, std):
            pass


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
                self.apply(partial(init, std=0.02))
                fns = list(map(partial(init, std=1.0), [self.fc]))

            def forward(self, x):
                return self.fc(x)
    """)
    code = convert_source(source).code
    assert "mp_graph_safe" not in code
