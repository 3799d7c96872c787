"""A project's own exception class raised in a model's forward (golbin/WaveNet's ``InputSizeError``): MindSpore's
static graph raises only some standard exception types and refuses any other at compile time, a branch never taken
too. The conversion says so (MP107 on the line, GraphRaiseTypeTransform) and leaves the raise as written: PyNative
matches torch (and raises the project's class on a short input, as torch does); GRAPH_MODE refuses the model loudly,
as said."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode, run_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class InputSizeError(Exception):
        def __init__(self, size, needed):
            super().__init__(f"input of {size} samples, {needed} needed")


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 3, 4)

        def forward(self, x):
            if x.shape[-1] < 4:
                raise InputSizeError(x.shape[-1], 4)
            if x.shape[0] == 0:
                raise ValueError("empty batch")
            return self.conv(x)
""")


def test_project_exception_said():
    result = convert_source(SOURCE)
    said = [d for d in result.diagnostics if d.code == "MP107"]
    assert len(said) == 1 and "InputSizeError" in said[0].message and said[0].line == 17, \
        [d.format() for d in result.diagnostics]
    assert "raise InputSizeError(x.shape[-1], 4)  # mindport: MP107" in result.code
    assert 'raise ValueError("empty batch")\n' in result.code  # a type the graph raises: nothing said


def test_pynative_matches_and_graph_refuses_as_said(tmp_path):
    import mindspore as ms

    from tests.source_module import load_source

    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((2, 2, 8)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Net", [x], tmp_path, "raise49", "pynative", atol=1e-6)
    module = load_source(code, tmp_path, "raise49_graph")
    with pytest.raises(module.InputSizeError):
        run_in_mode(module.Net(), [ms.Tensor(x[..., :2])], "pynative")
    with pytest.raises(RuntimeError, match="Unsupported exception type: InputSizeError"):
        run_in_mode(module.Net(), [ms.Tensor(x)], "graph")
