"""A field of torch's named-tuple result read on the call (Koopa's ``torch.linalg.lstsq(x, y).solution``,
``torch.max(h, 1).values``). The runtime returns torch's named tuple in PyNative but a plain tuple in a compiled
graph (``'Tuple' object has no attribute 'solution'``), and ``torch.max`` with a dim gives MindSpore's plain pair in
both modes; the converter reads the field by position (mindport/migrator/named_results.py)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from mindport.migrator.named_results import named_fields
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Koopman(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, y):
            h = self.fc(x)
            k = torch.linalg.lstsq(h, y).solution
            best = torch.max(h, -1).values + torch.min(h, -1).indices
            return k, best, torch.sort(y, 1).values
""")


def test_fields_are_read_by_position():
    code = convert_source(SOURCE).code
    for text in ("mp_linalg.lstsq(h, y)[0]", "mp_tensor.max(h, -1)[0]", "mp_tensor.min(h, -1)[1]",
                 "mp_math.sort(y, dim=1)[0]"):
        assert text in code, (text, code)


def test_the_fields_come_from_the_runtime_named_tuples():
    fields = named_fields()
    assert fields["mp_linalg.lstsq"] == ("solution", "residuals", "rank", "singular_values")
    assert fields["mp_linalg.svd"] == ("U", "S", "Vh") and fields["mp_math.topk"] == ("values", "indices")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_named_result_fields_match_torch_in_both_modes(tmp_path, mode):
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((2, 6, 4)).astype(np.float32) for _ in range(2))
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Koopman", [x, y], tmp_path, "koopman", mode,
                                rtol=1e-4, atol=1e-4)
