"""A file that puts its own class on a torch module and reads it from there (ikostrikov/pytorch-flows:
``nn.MaskedLinear = MaskedLinear``, then ``nn.MaskedLinear(...)`` in every flow). Before, each read was taken for a
torch API without a mapping entry and kept as ``torch.nn.MaskedLinear(...)`` (MP103), so the converted model failed to
build under MindSpore (AttributeError: module 'torch.nn' has no attribute 'MaskedLinear'). The name is the file's
own: the reads stay as written, on the MindSpore module the assignment patched."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class MaskedLinearForPatchTest(nn.Module):
        def __init__(self, n_in, n_out, mask):
            super().__init__()
            self.linear = nn.Linear(n_in, n_out)
            self.register_buffer("mask", mask)

        def forward(self, x):
            return F.linear(x, self.linear.weight * self.mask, self.linear.bias)


    nn.MaskedLinearForPatchTest = MaskedLinearForPatchTest


    class Made(nn.Module):
        def __init__(self, n=6, hidden=8):
            super().__init__()
            mask = torch.tril(torch.ones(hidden, n))
            self.joiner = nn.MaskedLinearForPatchTest(n, hidden, mask)
            self.trunk = nn.Sequential(nn.Tanh(), nn.MaskedLinearForPatchTest(hidden, n, torch.ones(n, hidden)))

        def forward(self, x):
            return self.trunk(self.joiner(x))
""")


def test_a_class_the_file_puts_on_a_torch_module_is_its_own(tmp_path):
    result = convert_source(SOURCE)
    assert not [d for d in result.diagnostics if d.code == "MP103"], [d.format() for d in result.diagnostics]
    assert "torch.nn.MaskedLinearForPatchTest" not in result.code, result.code
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Made", [x], tmp_path, "patched", "pynative", atol=1e-5)
    assert_port_matches_in_mode(SOURCE, result.code, "Made", [x], tmp_path, "patched", "graph", atol=1e-5)

