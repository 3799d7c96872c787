"""torch.max / torch.min / Tensor.max / Tensor.min whose one other argument is ``torch.zeros_like`` / ``ones_like`` /
``full_like`` of the input itself (no dtype, no keepdim) is torch's elementwise form on two tensors of one dtype and
shape: MindSpore's own ``ops.maximum`` / ``ops.minimum`` (TableCallTransform._elementwise_extreme_target, data
NATIVE_ELEMENTWISE), where mindport.runtime.tensor.max told the three forms apart at run time. x-transformers'
relative-position buckets (``torch.max(n, torch.zeros_like(n))``, ``torch.min(val_if_large,
torch.full_like(val_if_large, num_buckets - 1))``) were mp_tensor.max/min. A *_like of another tensor, another
tensor, a dim keep the runtime's. The converted module runs against torch in PyNative and GRAPH_MODE, on integer and
float inputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Buckets(nn.Module):
        def __init__(self, num_buckets=6):
            super().__init__()
            self.num_buckets = num_buckets

        def forward(self, n, x):
            a = torch.max(n, torch.zeros_like(n))
            b = torch.min(n, torch.full_like(n, self.num_buckets - 1))
            c = x.max(torch.ones_like(x))
            d = x.min(torch.zeros_like(x))
            e = torch.max(x, 1)[0]
            return a, b, c, d, e
""")


def test_a_max_against_a_like_of_its_input_is_mindspores_maximum():
    code = convert_source(SOURCE).code
    assert "a = ops.maximum(n, other=ops.zeros_like(n))" in code, code
    assert "b = ops.minimum(n, other=ops.full_like(n, self.num_buckets - 1))" in code, code
    assert "c = ops.maximum(x, other=ops.ones_like(x))" in code and "d = ops.minimum(x, other=ops.zeros_like(x))" \
        in code, code
    assert "e = mp_tensor.max(x, 1)[0]" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_elementwise_extremes_match_torch(mode, tmp_path):
    rng = np.random.default_rng(0)
    n = rng.integers(-9, 10, (3, 5)).astype(np.int64)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Buckets", [n, x], tmp_path, "extremes", mode)
