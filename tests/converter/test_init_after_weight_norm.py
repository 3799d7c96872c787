"""``nn.init.kaiming_normal_(self.conv.weight)`` after ``self.conv = nn.utils.weight_norm(self.conv)`` (FloWaveNet's
Conv): the weight is computed from ``weight_g``/``weight_v`` there, a Tensor with no ``set_data``. torch's init fills
the derived tensor and the next forward computes it again; the converted init goes to ``mindport.runtime.init``, which
fills a plain Tensor, and the layer computes its weight as torch's does."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils import weight_norm


    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(3, 4, 3, padding=1)
            self.conv = nn.utils.weight_norm(self.conv)
            nn.init.kaiming_normal_(self.conv.weight)
            self.other = weight_norm(nn.Linear(4, 4), name="weight")
            nn.init.xavier_uniform_(self.other.weight)
            self.lin = nn.Linear(4, 4)
            nn.init.kaiming_normal_(self.lin.weight)

        def forward(self, x):
            return self.lin(self.other(self.conv(x).transpose(1, 2)))
""")


def test_the_computed_weight_takes_the_runtime_init():
    code = convert_source(SOURCE).code
    assert "mp_init.kaiming_normal_(tensor=self.conv.weight)" in code
    assert "mp_init.xavier_uniform_(tensor=self.other.weight)" in code
    assert "self.lin.weight.set_data(" in code  # a plain layer's Parameter: MindSpore's initializer


def test_the_port_matches(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Conv", [x], tmp_path, "init_weight_norm",
                                "pynative", atol=1e-5)
