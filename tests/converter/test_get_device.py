"""``x.get_device()`` (FoldingNet's knn: ``if idx.get_device() == -1: idx_base = torch.arange(0, batch_size)...``):
torch's device ordinal, -1 for a CPU tensor. It was an unsupported entry, flagged MP101 and left to crash on a
MindSpore tensor ("'Tensor' object has no attribute 'get_device'"); it is the ordinal of the device MindSpore computes
on now, a constant in a static graph too, so the CPU path is taken as torch takes it."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def knn_gather(x, k):
        batch_size, num_points = x.size(0), x.size(2)
        inner = -2 * torch.matmul(x.transpose(2, 1), x)
        xx = torch.sum(x ** 2, dim=1, keepdim=True)
        idx = (-xx - inner - xx.transpose(2, 1)).topk(k=k, dim=-1)[1]
        if idx.get_device() == -1:
            idx_base = torch.arange(0, batch_size).view(-1, 1, 1) * num_points
        else:
            idx_base = torch.arange(0, batch_size, device=idx.get_device()).view(-1, 1, 1) * num_points
        idx = (idx + idx_base).view(-1)
        return x.transpose(2, 1).reshape(batch_size * num_points, -1)[idx].view(batch_size, num_points, k, -1)


    class Local(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)

        def forward(self, x):
            return self.fc(knn_gather(x, 3)).amax(dim=2)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_get_device_takes_torchs_cpu_path(mode, tmp_path):
    result = convert_source(SOURCE)
    assert not [d for d in result.diagnostics if d.code.startswith("MP1")], result.diagnostics
    assert "mp_tensor.get_device(idx) == -1" in result.code, result.code
    x = np.random.default_rng(0).standard_normal((2, 3, 7)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Local", [x], tmp_path, "get_device", mode)
