"""numpy's shape queries of a tensor in a model's forward (onpolicy's MAT: ``ori_shape = np.shape(state)``, ``state =
np.zeros((*ori_shape[:-1], 37), dtype=np.float32)``, ``batch_size = np.shape(state)[0]``): PyNative and torch run
numpy on the tensor's shape; MindSpore 2.10's graph interpreted the numpy call and the starred unpack of its result
failed ("The starred unpack merge input must be sequence, but got AbstractAny"). mindport.runtime.graph_numpy_shapes
gives the graph ``np.shape``/``np.ndim`` of a tensor as its static shape and rank. The
converted model runs against torch in PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import numpy as np
    import torch
    from torch import nn


    def check(value):
        return torch.from_numpy(value) if type(value) == np.ndarray else value


    class ShapedByNumpy(nn.Module):
        def __init__(self, width=5, out=4):
            super().__init__()
            self.proj = nn.Linear(width, out)
            self.width = width

        def forward(self, state, obs):
            ori_shape = np.shape(state)
            state = np.zeros((*ori_shape[:-1], self.width), dtype=np.float32)
            state = check(state)
            batch = np.shape(state)[0]
            scale = np.ndim(obs) * 0.5
            return self.proj(state + obs) * batch + scale
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_numpy_shape_queries_of_a_tensor_match_torch(mode, tmp_path):
    import mindport.runtime.containers  # noqa: F401 - the graph's numpy forms, as a port importing mindport's runtime has them

    rng = np.random.default_rng(0)
    state = rng.standard_normal((2, 3, 7)).astype(np.float32)
    obs = rng.standard_normal((2, 3, 5)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, convert_source(SOURCE).code, "ShapedByNumpy", [state, obs], tmp_path,
                                "np_shape55", mode)
