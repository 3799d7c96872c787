"""Module idioms of real models (failure class 5): each converts and the port matches torch."""
from __future__ import annotations

import textwrap

from mindport import convert_source
from port_check import assert_port_matches


def test_next_of_parameters_reads_the_first_parameter(tmp_path):
    """``next(self.parameters()).dtype`` (diffusion UNets cast their input to the weights' dtype): torch's
    parameters() is a generator; trainable_params() is a list, which next() refuses."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = nn.Parameter(torch.full((4,), 2.0), requires_grad=False)
                self.fc = nn.Linear(4, 3)

            @property
            def inner_dtype(self):
                return next(self.parameters()).dtype

            def forward(self, x):
                first = next(self.parameters(), None)
                return self.fc(x.type(self.inner_dtype) * first)
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "next(self.get_parameters())" in result.code
    assert_port_matches(source, result.code, "Net", (2, 4), tmp_path, "nextparam", atol=1e-6)


def test_an_empty_buffer_is_none(tmp_path):
    """``register_buffer('scale', None)`` on one branch (rotary embeddings without xpos): the attribute reads None
    (ms.Parameter(None) raised), the other branch's buffer is a frozen Parameter, and the port matches."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Scaled(nn.Module):
            def __init__(self, dim, use_scale):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                if not use_scale:
                    self.register_buffer('scale', None)
                    return
                self.register_buffer('scale', torch.linspace(0.5, 1.5, dim))

            def forward(self, x):
                y = self.fc(x)
                return y if self.scale is None else y * self.scale


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Scaled(4, False)
                self.b = Scaled(4, True)

            def forward(self, x):
                return self.b(self.a(x))
    """)
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "self.scale = None" in result.code
    report = assert_port_matches(source, result.code, "Net", (2, 4), tmp_path, "nonebuf", atol=1e-6)
    assert not report.missing and not report.unexpected, report
