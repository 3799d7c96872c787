"""A comment written left of a method's body (code commented out at column 0): a static graph parses the method from
its dedented source lines and refused it ("incorrect indentations in definition or comment of function"); the
converter indents the comment to the body, and the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def scaled(x, s):
        y = x * s
    # return y.clamp(min=0)
        return y


    class BatchNorm(nn.Module):
        def __init__(self, d=3):
            super().__init__()
            self.log_gamma = nn.Parameter(torch.zeros(d) + 0.1)

        def forward(self, x):
            mean = x.mean(0)
            var = x.var(0, unbiased=False)
            if x.shape[0] > 1:
    #            print('var', var.sum().item())
                x_hat = (x - mean) / torch.sqrt(var + 1e-5)
    #       debug line
            else:
                x_hat = x
            return scaled(torch.exp(self.log_gamma) * x_hat, 2.0)
    # trailing comment between classes
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_comment_left_of_the_body_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    assert "\n            #            print('var'" in code and "\n    # return y.clamp" in code
    assert "\n# trailing comment between classes" in code
    x = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "BatchNorm", [x], tmp_path, "cmt", mode, atol=1e-5)
