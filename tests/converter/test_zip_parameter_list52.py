"""A ParameterList zipped with a ModuleList in a model's forward (stgcn's ``zip(self.st_gcn_networks,
self.edge_importance)``, graph53's open class): MindSpore 2.10's GRAPH_MODE compiles ``for w in self.imp`` but not the
list inside ``zip`` ("Unsupported element type[unknown] to set element data type for KernelTensor"); the converter
gives ``tuple(self.imp)``. The converted model runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class Weighted(nn.Module):
        def __init__(self, n=3, weighted=True):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])
            if weighted:  # built under an if, a plain list otherwise (stgcn's edge_importance_weighting)
                self.imp = nn.ParameterList([nn.Parameter(torch.ones(4) * (i + 1)) for i in range(n)])
            else:
                self.imp = [1] * n

        def forward(self, x):
            for blk, w in zip(self.blocks, self.imp):
                x = blk(x) * w
            return x
""")


def test_parameter_list_in_zip_is_its_tuple():
    assert "zip(self.blocks, tuple(self.imp))" in convert_source(SOURCE).code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_zipped_parameter_list_matches_torch(mode, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "Weighted", [x], tmp_path, "zip_plist52", mode)
