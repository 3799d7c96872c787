"""Issue 30 (native ports): the grids unpacked from one ``torch.meshgrid`` call (``gx, gy = torch.meshgrid(h, w,
indexing='ij')``, RegionViT's relative position grid) have one dtype (torch refuses tensors of mixed dtypes there), so
a join of them is MindSpore's own ``ops.stack`` / ``ops.cat`` with no ``mp_tensor.promoted`` (native_facts
FloatFacts._unpack: pieces of one call). Run against torch with float and integer inputs, PyNative and GRAPH_MODE; a
grid joined with another tensor keeps the promotion."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Grid(nn.Module):
        def forward(self, h, w):
            gx, gy = torch.meshgrid(h, w, indexing='ij')
            return torch.stack((gx, gy)), torch.cat([gy, gx], dim=1)


    class Mixed(nn.Module):
        def forward(self, h, w):
            gx, gy = torch.meshgrid(h, h, indexing='ij')
            return torch.cat([gx, w], dim=0)
""")


def test_meshgrid_pieces_join_natively():
    code = convert_source(SOURCE).code
    assert "return ops.stack((gx, gy)), ops.cat([gy, gx], axis=1)" in code, code
    assert "ops.cat(mp_tensor.promoted([gx, w]), axis=0)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_meshgrid_pieces_match_torch(dtype, mode, tmp_path):
    code = convert_source(SOURCE).code
    rng = np.random.default_rng(4)
    h, w = (rng.integers(-5, 5, n).astype(dtype) for n in (3, 4))
    assert_port_matches_in_mode(SOURCE, code, "Grid", [h, w], tmp_path, f"meshgrid_{np.dtype(dtype).name}", mode)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_grid_joined_with_another_tensor_keeps_the_promotion(mode, tmp_path):
    code = convert_source(SOURCE).code
    h = np.arange(3, dtype=np.int64)
    w = np.linspace(0, 1, 9, dtype=np.float32).reshape(3, 3)
    assert_port_matches_in_mode(SOURCE, code, "Mixed", [h, w], tmp_path, "meshgrid_mixed", mode)
