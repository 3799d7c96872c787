"""An adaptive pooling layer's output size held in a name that is a list at run time (muzero-general's
``DownsampleCNN``: ``nn.AdaptiveAvgPool2d(h_w)`` with ``h_w = [6, 6]`` from its configuration). torch takes a list;
the conversion wrote the name as it was and MindSpore's layer refused it ("the type of 'output_size' should be one of
'['int', 'tuple']', but got type 'list'"). The layer's mapping (``adaptive_output_size``) hands a list on as a tuple,
an int or a tuple as it is: the port matches torch for each (2-D and 3-D, average and max)."""
from __future__ import annotations

import textwrap

import pytest

from mindport import convert_source
from port_check import assert_port_matches

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Down(nn.Module):
        def __init__(self, h_w, cfg):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.avg = nn.AdaptiveAvgPool2d(h_w)
            self.max = nn.AdaptiveMaxPool2d(output_size=cfg["pool"])

        def forward(self, x):
            y = self.conv(x)
            return torch.cat([self.avg(y).flatten(1), self.max(y).flatten(1)], dim=1)


    class Down3d(nn.Module):
        def __init__(self, sizes):
            super().__init__()
            self.avg = nn.AdaptiveAvgPool3d(sizes[0])
            self.max = nn.AdaptiveMaxPool3d(sizes[1])

        def forward(self, x):
            return self.avg(x).flatten(1) + self.max(x).flatten(1)
""")


@pytest.mark.parametrize("h_w, pool", [([3, 2], [2, 2]), (4, (3, 3)), ((5, 3), [1, 1])])
def test_adaptive_2d_output_size_held_in_a_name(tmp_path, h_w, pool):
    code = convert_source(SOURCE).code
    assert "isinstance(h_w, list)" in code, code
    name = f"pool2d_{abs(hash((str(h_w), str(pool))))}"
    assert_port_matches(SOURCE, code, "Down", (2, 3, 9, 7), tmp_path, name, atol=1e-5, args=(h_w, {"pool": pool}))


def test_adaptive_3d_output_size_held_in_a_subscript(tmp_path):
    code = convert_source(SOURCE).code
    assert_port_matches(SOURCE, code, "Down3d", (2, 3, 4, 6, 4), tmp_path, "pool3d", atol=1e-5,
                        args=([[2, 3, 2], [2, 3, 2]],))
