"""``torch.add(input, other, alpha=k)`` with ``k`` any expression (EDM2's ``normalize``: ``torch.add(eps, norm,
alpha=np.sqrt(norm.numel() / x.numel()))``): ``ops.add`` has no alpha, and the call was flagged MP102 and kept as
torch (a torch op on a MindSpore tensor then crashed the process). Now ``other`` is scaled: ``ops.add(input,
other * k)``. Checked against torch: literal, negative, computed alpha, a Python number as input, no alpha."""
from __future__ import annotations

import numpy as np

SOURCE = '''
import numpy as np
import torch


def f(x, y, eps):
    norm = torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32)
    a = torch.add(eps, norm, alpha=np.sqrt(norm.numel() / x.numel()))
    b = torch.add(x, y, alpha=2)
    c = torch.add(x, y - 1, alpha=-0.5)
    d = torch.add(x, y, alpha=1)
    e = torch.add(x, y)
    return a, b, c, d, e
'''


def test_add_alpha_matches_torch(tmp_path, monkeypatch):
    import mindspore as ms
    import torch

    from tests.converter.port_check import torch_and_converted

    t_ns, m_ns = torch_and_converted(SOURCE, "addalpha", tmp_path, monkeypatch)
    assert "torch" not in m_ns["f"].__code__.co_names
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((3, 4)).astype(np.float32)
    want = t_ns["f"](torch.from_numpy(x), torch.from_numpy(y), 1e-4)
    got = m_ns["f"](ms.Tensor(x), ms.Tensor(y), 1e-4)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=1e-6)
