"""``raise ArithmeticError`` in a function a model's forward calls (batch 8 Wave-U-Net's ``centre_crop``): MindSpore's
static graph parses every raise of the code it compiles and accepts only some builtin exception types ("Unsupported
exception type: ArithmeticError"); the converter raises a subclass it accepts, which ``except ArithmeticError``
still catches."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def centre_crop(x, target):
        diff = x.shape[-1] - target.shape[-1]
        crop = diff // 2
        if crop == 0:
            return x
        if crop < 0:
            raise ArithmeticError
        return x[:, :, crop:-crop].contiguous()


    class Up(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 2, 5)

        def forward(self, x):
            y = self.conv(x)
            return torch.cat([centre_crop(x, y), y], dim=1)
""")


def test_a_subclass_is_raised_and_still_caught():
    code = convert_source(SOURCE).code
    assert "raise OverflowError" in code and "ArithmeticError" not in code
    namespace: dict = {}
    exec("def centre_crop" + code.split("def centre_crop")[1].split("class Up")[0], namespace)
    with pytest.raises(ArithmeticError):
        namespace["centre_crop"](np.zeros((1, 1, 2)), np.zeros((1, 1, 6)))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_crop_with_a_raise_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 2, 12)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Up", [x], tmp_path, "raise_types", mode, atol=1e-5)
