"""scaled_dot_product_attention on float16/bfloat16: torch's CPU kernel accumulates in float32, so the runtime
computes half inputs in float32 and casts back (in float16 throughout, results drift by ~1e-2 relative)."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport.runtime import nn_functional as mp_F


@pytest.mark.parametrize(("t_half", "m_half", "tol"), [(torch.float16, ms.float16, 1e-3),
                                                       (torch.bfloat16, ms.bfloat16, 8e-3)])
@pytest.mark.parametrize("kwargs", [{"scale": 2.0, "enable_gqa": True}, {"is_causal": True}, {"mask": True}])
def test_half_inputs_match_torch(t_half, m_half, tol, kwargs):
    rng = np.random.default_rng(7)
    q, k, v = rng.random((2, 4, 16, 8)), rng.random((2, 2 if kwargs.get("enable_gqa") else 4, 16, 8)), None
    v = rng.random(k.shape)
    kwargs = dict(kwargs)
    mask = rng.standard_normal((16, 16)) if kwargs.pop("mask", False) else None
    t_args = [torch.tensor(a, dtype=t_half) for a in (q, k, v)]
    m_args = [ms.Tensor(a, ms.float32).astype(m_half) for a in (q, k, v)]
    t_mask = None if mask is None else torch.tensor(mask, dtype=t_half)
    m_mask = None if mask is None else ms.Tensor(mask, ms.float32).astype(m_half)
    expected = torch.nn.functional.scaled_dot_product_attention(*t_args, attn_mask=t_mask, **kwargs)
    got = mp_F.scaled_dot_product_attention(*m_args, attn_mask=m_mask, **kwargs)
    assert got.dtype == m_half
    np.testing.assert_allclose(got.astype(ms.float32).asnumpy(), expected.float().numpy(), rtol=tol, atol=tol)
