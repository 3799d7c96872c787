"""``self.forward = lambda x: ...`` set in a model's ``__init__`` (PointCNN's BatchNorm-over-the-batch 'LayerNorm',
with no ``forward`` method of its own): the converted Cell held the lambda on the instance as ``self.construct``,
which runs in PyNative and failed to compile in a static graph ("Parse Resolve convert failed"). The converter writes
it as the class's ``construct`` method; the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class BatchOnlyNorm(nn.Module):
        def __init__(self, n, dim):
            super().__init__()
            if dim == 1:
                self.bn = nn.BatchNorm1d(n)
            else:
                self.bn = nn.BatchNorm2d(n)
            self.forward = lambda x: self.bn(x.unsqueeze(0)).squeeze(0) * 2.0


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 5)
            self.norm = BatchOnlyNorm(4, 1)

        def forward(self, x):
            return self.norm(self.fc(x))
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_forward_lambda_set_in_init_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "def construct(self, x):" in code and "self.construct = lambda" not in code
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "fwdlambda", mode, rtol=1e-4, atol=1e-5)


def test_a_forward_lambda_reading_init_locals_is_left():
    source = textwrap.dedent("""\
        import torch.nn as nn


        class Scale(nn.Module):
            def __init__(self, k):
                super().__init__()
                factor = k * 2
                self.forward = lambda x: x * factor
    """)
    code = convert_source(source).code
    assert "self.construct = lambda x: x * factor" in code
