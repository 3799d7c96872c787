"""torch.argmax / Tensor.argmax is MindSpore's own ``ops.argmax`` (the call mindport.runtime.math.argmax makes) where
``keepdim`` is a literal false value or ``dim`` a literal int (transforms.functions.argmax_native_dims): the runtime
exists for ``dim`` None with ``keepdim`` true, where torch keeps every dimension as 1 and ops.argmax gives a 0-d index.
nanochat's and x-transformers' ``logits.argmax(dim=-1, keepdim=True)`` were mp_math.argmax. A receiver of unknown
kind keeps its own ``argmax`` as written, as before. The converted module runs against torch in PyNative and
GRAPH_MODE, the indices' shapes and dtype compared too."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Picks(nn.Module):
        def __init__(self, keep=True):
            super().__init__()
            self.keep = keep

        def forward(self, logits):
            a = logits.argmax(dim=-1, keepdim=True)
            b = torch.argmax(logits, 1)
            c = torch.argmax(logits)
            d = logits.argmax(0, self.keep)
            e = logits.argmax(keepdim=True)
            return a, b, c, d, e
""")


def test_argmax_is_mindspores_unless_every_dimension_may_be_kept():
    code = convert_source(SOURCE).code
    assert "a = ops.argmax(logits, dim=-1, keepdim=True)" in code, code
    assert "b = ops.argmax(logits, dim=1)" in code and "c = ops.argmax(logits)" in code, code
    assert "d = ops.argmax(logits, dim=0, keepdim=self.keep)" in code, code
    assert "e = mp_math.argmax(logits, keepdim=True)" in code, code
    assert code.count("mp_math.argmax(") == 1, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_argmax_matches_torch(mode, tmp_path):
    import mindspore as ms
    import torch

    logits = np.random.default_rng(0).permutation(24).reshape(2, 3, 4).astype(np.float32)  # no ties
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Picks", [logits], tmp_path, "argmax", mode)
    net = load_module(code, tmp_path / f"m_argmax_{mode}.py", f"m_argmax_{mode}").Picks()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = net(ms.Tensor(logits))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    want = load_module(SOURCE, tmp_path / f"t_argmax_{mode}.py", f"t_argmax_{mode}").Picks()(torch.from_numpy(logits))
    assert [str(g.dtype) for g in got] == ["Int64"] * 5 and [w.dtype for w in want] == [torch.int64] * 5
