"""What ``self.X`` holds is read from the class's own assignments: a buffer (register_buffer) or a tensor attribute
takes the Tensor mapping of names numpy and lists share (``self.running_mean.repeat(b)`` is torch's repeat, tile in
MindSpore), a list attribute keeps its list methods. And ``torch.Tensor(n)`` is the legacy constructor (n values),
not ``mindspore.Tensor(n)`` (a scalar)."""
from __future__ import annotations

import textwrap

from mindport import convert_source
from port_check import assert_port_matches

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class AdaNorm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.gamma = nn.Parameter(torch.Tensor(n).uniform_())
            self.beta = nn.Parameter(torch.zeros(n))
            self.register_buffer('running_mean', torch.arange(float(n)))
            self.scale = torch.ones(n) * 2
            self.order = [2, 0, 1]

        def forward(self, x):
            b = x.size(0)
            shift = self.running_mean.repeat(b).view(b, -1) + self.scale.repeat(b, 1)
            first = self.order.index(0)
            return (x - shift) * self.gamma.view(1, -1) + self.beta + first
""")


def test_self_attributes_take_the_mapping_of_what_they_hold(tmp_path):
    result = convert_source(SOURCE)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "self.running_mean.tile(" in result.code and "self.scale.tile(" in result.code
    assert "self.order.index(0)" in result.code
    report = assert_port_matches(SOURCE, result.code, "AdaNorm", (4, 3), tmp_path, "selfattr", atol=1e-6, args=(3,))
    assert not report.missing and not report.unexpected, report
