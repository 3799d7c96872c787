"""A padding that is a literal of ints, some negative (a crop in torch) and some positive (``F.pad(t, (1, -1))``, the
shift of lucidrains' autoregressive wrappers: ``F.pad(is_eos_tokens, (1, -1))``; x-transformers' ``F.pad(gate, (0,
0, 1, -1), value=0.)``), is MindSpore's own slicing and ``ops.pad`` of the non-negative rest (``ops.pad(t[..., :-1],
(1, 0))``: mindport.mappings.transforms.layers._literal_crop), where it was ``mindport.runtime.nn_functional.pad``,
which decided the same crop at run time. A name, an expression, a padding of crops only keep the runtime's. The
converted module runs against torch in PyNative and GRAPH_MODE, twice (MindSpore 2.10's ops.pad is wrong for a
negative amount from its second call in a process on), on float, bool and integer inputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Shifts(nn.Module):
        def forward(self, x, flags, ids):
            a = F.pad(x, (1, -1))
            b = F.pad(x, (0, 0, 1, -1), value=0.5)
            c = F.pad(x, (-1, 1, -2, 2))
            d = F.pad(x, (-1, 2, 0, 0), mode="replicate")
            e = F.pad(x, (0, 0, 0, 0, 1, -1))
            shifted = F.pad(flags, (1, -1), value=False)
            first = F.pad(ids, (2, -2))
            n = 1
            g = F.pad(x, (n, -n))
            h = F.pad(x, (0, -1))
            return a, b, c, d, e, shifted, first, g, h
""")


def test_a_literal_crop_is_slicing_and_mindspores_pad():
    code = convert_source(SOURCE).code
    assert "ops.pad(x[..., :-1], (1, 0))" in code, code
    assert "ops.pad(x[..., :-1, :], (0, 0, 1, 0), value=0.5)" in code, code
    assert "ops.pad(x[..., 2:, 1:], (0, 1, 0, 2))" in code, code
    assert 'ops.pad(x[..., 1:], (0, 2, 0, 0), mode="replicate")' in code, code
    assert "ops.pad(x[..., :-1, :, :], (0, 0, 0, 0, 1, 0))" in code, code
    assert "ops.pad(flags[..., :-1], (1, 0), value=False)" in code, code
    assert "ops.pad(ids[..., :-2], (2, 0))" in code, code
    assert "mp_F.pad(x, (n, -n))" in code and "mp_F.pad(x, (0, -1))" in code, code  # a name; crops only
    assert code.count("mp_F.pad(") == 2, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_literal_crops_match_torch_on_every_call(mode, tmp_path):
    import mindspore as ms

    ms.ops.pad(ms.Tensor(np.ones((2, 3), np.float32)), (0, -1))  # MindSpore's first negative pad is right
    result = convert_source(SOURCE)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    flags = rng.standard_normal((2, 7)) > 0
    ids = rng.integers(0, 9, (2, 7)).astype(np.int64)
    for call in range(2):
        assert_port_matches_in_mode(SOURCE, result.code, "Shifts", [x, flags, ids], tmp_path, f"crop{call}", mode)
