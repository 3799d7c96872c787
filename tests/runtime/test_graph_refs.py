"""A Parameter given directly to ``F.grid_sample`` converts to ``ops.grid_sample`` and matches torch in PyNative and
GRAPH_MODE (mindport.runtime.graph_refs).

In a graph MindSpore types a Parameter as ``Ref[Tensor]``, and the 2-d grid sampler's type check compared that with
the grid's ``Tensor`` type: "Input grid must have the same data type with input x! input[x] data type =
Ref[Tensor[Float32]] but input[grid] data type = Tensor[Float32]" (TensoRF's ``F.grid_sample(self.density_plane[i],
grid)``, a ParameterList item; measured on 2.10). A Parameter as the grid failed the same way. Expected values come
from torch."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import transfer_weights
from tests.converter.port_check import torch_and_converted

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Planes(nn.Module):
        def __init__(self):
            super().__init__()
            self.planes = nn.ParameterList([nn.Parameter(torch.randn(1, 3, 5, 6)) for _ in range(2)])
            self.volume = nn.Parameter(torch.randn(1, 2, 4, 5, 6))
            self.points = nn.Parameter(torch.rand(1, 7, 1, 2) * 2 - 1)

        def forward(self, grid, grid3):
            a = F.grid_sample(self.planes[0], grid, align_corners=True)
            b = F.grid_sample(self.planes[1], grid, mode='nearest', align_corners=False)
            c = F.grid_sample(grid.permute(0, 3, 1, 2), self.points, align_corners=True)
            d = F.grid_sample(self.volume, grid3, align_corners=True)
            return a, b, c, d
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_grid_sample_of_a_parameter_matches_torch(tmp_path, monkeypatch, mode):
    t_ns, m_ns = torch_and_converted(SOURCE, f"grid_sample_parameter_{mode}", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Planes"]().eval()
    m_model = m_ns["Planes"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    rng = np.random.default_rng(0)
    grid = (rng.random((1, 4, 3, 2)) * 2 - 1).astype(np.float32)
    grid3 = (rng.random((1, 3, 2, 1, 3)) * 2 - 1).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(grid), torch.from_numpy(grid3))
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = m_model(ms.Tensor(grid), ms.Tensor(grid3))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_the_converted_call_stays_native():
    from mindport import convert_source

    code = convert_source(SOURCE, "planes.py").code
    assert code.count("ops.grid_sample(") == 4, code
