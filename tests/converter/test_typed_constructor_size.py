"""torch's legacy typed constructors take their sizes as a keyword too: ``torch.FloatTensor(size=(4, 3))`` (a
parameter's storage, initialised after: ``nn.Parameter(torch.FloatTensor(size=(d_in, d_out)))`` then
``xavier_normal_``). The converter flagged it, "MP102 torch.FloatTensor: unexpected keyword argument 'size'"
(panwangwin/SpatialTemporalNetTrainer-pytorch's DiffusionGCN2), and left the line torch's. Each port matches torch
in PyNative and in GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SIZED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Projection(nn.Module):
        def __init__(self, d_in=4, d_out=3):
            super().__init__()
            self.weight = nn.Parameter(torch.FloatTensor(size=(d_in, d_out)))
            self.bias = nn.Parameter(torch.Tensor(size=(d_out,)))
            self.register_buffer("steps", torch.LongTensor(size=[d_out]).zero_())
            nn.init.xavier_normal_(self.weight.data, gain=1.414)
            nn.init.constant_(self.bias.data, val=0.5)

        def forward(self, x):
            return x @ self.weight + self.bias + self.steps
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sizes_given_as_a_keyword(tmp_path, mode):
    result = convert_source(SIZED)
    assert not [d for d in result.diagnostics if d.code == "MP102"], result.diagnostics
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SIZED, result.code, "Projection", [x], tmp_path, "sized", mode, atol=1e-6)


def test_the_runtime_constructors_take_size():
    from mindport.runtime import tensor

    assert tensor.FloatTensor(size=(2, 3)).shape == (2, 3)
    assert tensor.LongTensor(size=[4]).dtype == tensor.LongTensor(4).dtype
    assert tensor.Tensor(size=(5,)).shape == (5,)
    with pytest.raises(TypeError):
        tensor.FloatTensor([1.0, 2.0], size=(2,))
