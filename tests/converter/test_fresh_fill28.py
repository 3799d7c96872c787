"""``x.fill_(v)`` on a tensor nothing else holds, read in an expression (CaiT's ``torch.zeros(1, 1, dim).fill_(eps)``,
Whisper's ``torch.empty(n, n).fill_(-np.inf).triu_(1)``), is MindSpore's ``ops.full_like(receiver, v)``
(TableCallTransform._fresh_fill): torch's fill keeps the receiver's shape and dtype, as full_like does (a float into
an int64 tensor truncates in both; a 0-d tensor value is its number). A fill of a name (``held.fill_(0.5)``) keeps the
runtime fill_, which writes into its receiver. The converted module is run against torch in PyNative and GRAPH_MODE,
values and dtypes compared."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    import numpy as np
    import torch
    import torch.nn as nn


    class Scale(nn.Module):
        def __init__(self, dim=3, eps=1e-5):
            super().__init__()
            self.scale = nn.Parameter(torch.zeros(1, 1, dim).fill_(eps))
            self.register_buffer("mask", torch.empty(4, 4).fill_(-np.inf).triu_(1), persistent=False)
            self.register_buffer("count", torch.zeros(3, dtype=torch.long).fill_(2.7), persistent=False)

        def forward(self, x):
            held = torch.zeros(4, 4)
            held.fill_(0.5)
            return (x * self.scale, self.mask + held, self.count,
                    x.new_zeros(2).fill_(value=torch.tensor(3.5)), torch.ones(2, dtype=torch.float16).fill_(1e-5))
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_fill_of_a_fresh_tensor_is_full_like_and_matches(mode, tmp_path):
    import torch

    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    code = result.code
    assert code.count("ops.full_like(") == 5 and code.count("mp_inplace.fill_(") == 1, code
    assert "held = mp_inplace.fill_(held, value=0.5)" in code, code
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Scale", [x], tmp_path, "fresh_fill", mode)
    want = load_module(SOURCE, tmp_path / "t_dtypes.py", "t_dtypes").Scale()(torch.from_numpy(x))
    got = load_module(code, tmp_path / f"m_dtypes_{mode}.py", f"m_dtypes_{mode}").Scale()(__import__("mindspore").Tensor(x))
    assert [str(t.dtype).rpartition(".")[2].lower() for t in got] == [str(t.dtype).rpartition(".")[2] for t in want]
