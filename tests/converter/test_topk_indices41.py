"""torch.topk read only for its indices in the expression (x-transformers' ``keep_indices = logits.topk(k, dim=1)[1]``,
NaViT's ``torch.randn(n).topk(k, dim=-1).indices``) is MindSpore's own ``ops.topk(...)[1].astype(ms.int64)``
(TableCallTransform._indices_target, native_facts.indices_read): the runtime's topk only casts MindSpore's int32
indices to torch's int64. ``.values`` is read by position as ``[0]`` already was (native_facts.values_only): MindSpore's
own. An unpacking that reads both keeps the runtime's. The converted module runs against torch in PyNative and
GRAPH_MODE, the indices' dtype compared too."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode, load_module

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Keep(nn.Module):
        def forward(self, logits):
            keep = logits.topk(3, dim=1)[1]
            last = torch.topk(logits, 2).indices
            top = torch.topk(logits, 2, dim=0, largest=False).values
            gathered = logits.gather(1, keep)
            val, ind = torch.topk(logits, 2)
            return keep, last, top, gathered, val, ind
""")


def test_indices_read_alone_are_mindspores_topk_cast_to_int64():
    code = convert_source(SOURCE).code
    assert "keep = ops.topk(logits, k=3, dim=1)[1].astype(ms.int64)" in code, code
    assert "last = ops.topk(logits, 2)[1].astype(ms.int64)" in code, code
    assert "top = ops.topk(logits, 2, dim=0, largest=False)[0]" in code, code
    assert "val, ind = mp_math.topk(logits, 2)" in code, code
    assert code.count("mp_math.topk(") == 1, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_topk_indices_match_torch(mode, tmp_path):
    import mindspore as ms

    logits = np.random.default_rng(0).permutation(40).reshape(5, 8).astype(np.float32)  # no ties
    code = convert_source(SOURCE).code
    assert_port_matches_in_mode(SOURCE, code, "Keep", [logits], tmp_path, "topk", mode)
    net = load_module(code, tmp_path / f"m_dtypes_{mode}.py", f"m_dtypes_{mode}").Keep()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        keep, last, *_, ind = net(ms.Tensor(logits))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert keep.dtype == last.dtype == ind.dtype == ms.int64
