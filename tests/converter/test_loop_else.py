"""``for ... else`` / ``while ... else`` in forward code (batch 13 CondenseNet's ``LearnedGroupConv._check_drop``):
GRAPH_MODE refuses both ("The 'for...else...' statement is not supported now"); the converter rewrites them to a
no-break flag (LoopElseTransform) and the port matches torch in PyNative and compiled."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Loops(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.stages = 4

        def _stage(self, x):
            stage = None
            for i in range(self.stages):
                if x.shape[-1] * i > 6:
                    stage = i
                    break
            else:
                stage = 9
            return stage

        def forward(self, x):
            x = self.fc(x)
            y = x * 0
            for i in range(3):
                if i > 5:
                    break
            else:
                y = y + 1
            n = 0
            while n < 3:
                n += 1
            else:
                x = x * 2
            acc = 0
            for a in range(2):
                for b in range(3):
                    if b == a: break
                else:
                    acc += 100
                if a > 4:
                    break
            else:
                acc += 1
            k = 0
            while k < 5:
                k += 1
                if k == 2:
                    break
            else:
                acc += 1000
            return x * self._stage(x) + y + acc + k
""")


def test_loop_else_becomes_a_flag():
    code = convert_source(SOURCE).code
    assert "else:\n" not in code.replace("if _mp_no_break", "")
    assert "_mp_no_break = False" in code and "_mp_no_break_1 = True" in code


def test_module_level_loop_left():
    source = textwrap.dedent("""\
        for i in range(3):
            pass
        else:
            done = True
    """)
    assert convert_source(source).code == source


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_loop_else_matches(tmp_path, mode):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Loops", [x], tmp_path, "loop_else", mode, atol=1e-5)
