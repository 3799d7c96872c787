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
