"""torch.nn.functional.multi_head_attention_forward (CLIP's ModifiedResNet pools with it, separate q/k/v weights):
converted to mindport's, each optional path run against torch (outputs and attention weights)."""
from __future__ import annotations

import pytest

from test_snippet_fixes import run_both

SETUP = """\
import numpy as np
import torch
import torch.nn.functional as F
rng = np.random.default_rng(0)
E, H, L, S, N = 8, 2, 3, 5, 2
def r(*shape):
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
q, k, v = r(L, N, E), r(S, N, E), r(S, N, E)
w, b, ow, ob = r(3 * E, E), r(3 * E), r(E, E), r(E)
kpm = torch.tensor([[False, False, True, True, False], [False, True, True, True, True]])
"""

VARIANTS = {
    "packed": "q, k, v, E, H, w, b, None, None, False, 0.0, ow, ob",
    "separate": "q, k, v, E, H, None, b, None, None, False, 0.0, ow, ob, use_separate_proj_weight=True, "
                "q_proj_weight=r(E, E), k_proj_weight=r(E, E), v_proj_weight=r(E, E)",
    "bias_kv_zero_attn": "q, k, v, E, H, w, b, r(1, 1, E), r(1, 1, E), True, 0.0, ow, ob, key_padding_mask=kpm",
    "float_mask": "q, k, v, E, H, w, None, None, None, False, 0.0, ow, ob, attn_mask=r(L, S)",
    "bool_mask_per_head": "q, k, v, E, H, w, b, None, None, False, 0.0, ow, ob, "
                          "attn_mask=torch.from_numpy(rng.random((N * H, L, S)) < 0.3)",
    "no_weights": "q, k, v, E, H, w, b, None, None, False, 0.0, ow, ob, need_weights=False",
    "per_head_weights": "q, k, v, E, H, w, b, None, None, False, 0.0, ow, ob, average_attn_weights=False",
    "narrower_output": "q, k, v, E, H, None, b, None, None, False, 0.0, r(4, E), r(4), use_separate_proj_weight=True, "
                       "q_proj_weight=r(E, E), k_proj_weight=r(E, E), v_proj_weight=r(E, E), need_weights=False",
    "unbatched": "q[:, 0], k[:, 0], v[:, 0], E, H, w, b, None, None, False, 0.0, ow, ob",
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_multi_head_attention_forward_matches_torch(variant):
    program = SETUP + f"out, weights = F.multi_head_attention_forward({VARIANTS[variant]})\n"
    names = ["out"] if "need_weights=False" in VARIANTS[variant] else ["out", "weights"]
    _, m_space, _ = run_both(program, names, rtol=1e-4, atol=1e-4)
    if "need_weights=False" in VARIANTS[variant]:
        assert m_space["weights"] is None
