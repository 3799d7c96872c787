"""The mint profile: torch-aligned mint targets where they exist, the nn mapping (which also runs on Ascend) for APIs
mint has no counterpart for, instead of an MP101 per call."""
from __future__ import annotations

import numpy as np

from mindport import convert_source

SOURCE = '''import torch


def f(x):
    t = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float32)
    return x * t, torch.einsum("ij,kj->ik", x, x)
'''


def test_mint_profile_falls_back_to_the_nn_mapping_and_runs():
    import mindspore as ms

    result = convert_source(SOURCE, target="mint")
    assert not result.diagnostics, result.code
    assert "ms.Tensor([[1.0, 2.0, 3.0]], dtype=ms.float32)" in result.code  # torch.tensor: no mint counterpart
    namespace: dict = {}
    exec(compile(result.code, "converted", "exec"), namespace)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    scaled, gram = namespace["f"](ms.Tensor(x))
    np.testing.assert_allclose(scaled.asnumpy(), x * np.array([[1.0, 2.0, 3.0]], np.float32))
    np.testing.assert_allclose(gram.asnumpy(), x @ x.T)


def test_nn_profile_is_unchanged_by_the_fallback():
    assert convert_source(SOURCE, target="nn").code == convert_source(SOURCE).code
