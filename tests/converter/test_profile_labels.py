"""A profiler's label around a block of a forward (pixel-nerf's ResnetFC and ResnetBlockFC, trials pixelnerf/posenc and
pixelnerf/resnetfc: ``with profiler.record_function("resblock"):`` of ``import torch.autograd.profiler as profiler``)
is flattened like a no_grad block: it changes nothing the block computes, and torch's record_function kept in a
forward failed GRAPH_MODE ("Only support jit_class instance, but got PythonObject(type: <class
'torch.autograd.profiler.record_function'>)", MindSpore 2.10). The slice: both spellings (torch.autograd.profiler
through a module alias, torch.profiler by name), nested, once per mode against torch. Expected values are torch's."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

LABELLED = textwrap.dedent("""\
    import torch
    import torch.autograd.profiler as profiler
    import torch.nn as nn
    from torch.profiler import record_function


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 6)

        def forward(self, x):
            with profiler.record_function("resblock"):
                return x + self.fc(torch.relu(x))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])

        def forward(self, x):
            with record_function("infer"):
                for block in self.blocks:
                    x = block(x)
                with profiler.record_function("mean"):
                    x = x - x.mean(dim=-1, keepdim=True)
            return x
""")


def test_labels_flattened():
    result = convert_source(LABELLED)
    assert "record_function" not in result.code and "profiler" not in result.code, result.code
    assert not result.diagnostics, [d.format() for d in result.diagnostics]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_labelled_net_matches_torch(tmp_path, mode):
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    assert_port_matches_in_mode(LABELLED, convert_source(LABELLED).code, "Net", [x], tmp_path, "labelled", mode)
