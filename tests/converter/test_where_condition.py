"""``torch.where`` with an integer condition: torch takes a uint8 mask (nonzero is True; deprecated, still working,
as pytorch-crf's default ``mask = torch.ones_like(tags, dtype=torch.uint8)``); MindSpore's Select refuses any
condition that is not bool. A condition not bool by construction is cast to bool; a comparison is left as it is."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, mask):
            score = self.fc(x)
            m = mask.to(torch.uint8)
            out = torch.where(m.unsqueeze(1), score, x)
            out = torch.where(x > 0, out, -out)
            return out.where(m.unsqueeze(1), x * 2)
""")


def test_only_unknown_conditions_are_cast():
    code = convert_source(SOURCE).code
    assert "ops.where(m.unsqueeze(1).astype(ms.bool_), score, x)" in code
    assert "ops.where(x > 0, out, -out)" in code
    assert "out.where(m.unsqueeze(1).astype(ms.bool_), x * 2)" in code


def test_the_port_matches(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    mask = np.array([1, 0, 1, 1, 0], dtype=np.uint8)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Masked", [x, mask], tmp_path, "where_uint8",
                                "pynative", atol=1e-5)
