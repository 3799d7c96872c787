"""1-D adaptive pooling over lengths the output size does not divide: MindSpore 2.10's ops.adaptive_avg_pool1d /
adaptive_max_pool1d and nn.AdaptiveAvgPool1d / AdaptiveMaxPool1d refuse them (ValueError "must be divisible by output
size"), torch pools uneven bins. Each torch form is converted and run against torch over sizes and lengths, batched
and unbatched, indices included; a global pool (size 1) stays MindSpore's own layer."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import mindspore as ms

from mindport import convert_source
from tests.converter.port_check import build_layer_pair

SIZES = [(3, (2, 4, 7)), (5, (2, 4, 7)), (4, (3, 10)), (7, (1, 2, 10)), (1, (2, 4, 9)), (6, (2, 4, 6))]


@pytest.mark.parametrize("layer", ["AdaptiveAvgPool1d({n})", "AdaptiveMaxPool1d({n})",
                                   "AdaptiveMaxPool1d({n}, return_indices=True)"])
@pytest.mark.parametrize("n,shape", SIZES)
def test_adaptive_pool1d_layers_match_torch(layer, n, shape):
    t_layer, m_layer, code = build_layer_pair(layer.format(n=n))
    if n == 1 and "indices" not in layer:
        assert "mp_nn" not in code, code  # global pooling: MindSpore's own layer
    x = np.random.default_rng(n).standard_normal(shape).astype(np.float32)
    want = t_layer(torch.from_numpy(x))
    got = m_layer(ms.Tensor(x))
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.detach().numpy(), rtol=1e-6, atol=1e-6)
    if len(got) == 2:
        assert got[1].dtype == ms.int64


FUNCTIONS = ("import torch\nimport torch.nn.functional as F\n\n\ndef f(x, n):\n"
             "    return (F.adaptive_avg_pool1d(x, 3), F.adaptive_max_pool1d(x, 5), torch.adaptive_avg_pool1d(x, n),\n"
             "            F.adaptive_max_pool1d(x, 4, return_indices=True)[1],\n"
             "            F.adaptive_avg_pool1d(x, 1) if x.ndim == 3 else x.mean(-1, keepdim=True))\n")


@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 11), (1, 2, 13)])
def test_adaptive_pool1d_functions_match_torch(shape):
    result = convert_source(FUNCTIONS, "f.py")
    assert not result.diagnostics
    # a global pool stays MindSpore's own op, through mindport.runtime.unbatched (which gives an unbatched input its
    # batch axis: ops.adaptive_avg_pool1d takes batches only; a module-level function shows no rank)
    assert "mp_unbatched.adaptive_avg_pool1d(x, output_size=1)" in result.code, result.code
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(FUNCTIONS, "<torch>", "exec"), t_ns)  # noqa: S102 - the test's own program
    exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = t_ns["f"](torch.from_numpy(x), 6)
    got = m_ns["f"](ms.Tensor(x), 6)
    for w, g in zip(want, got):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=1e-6)
