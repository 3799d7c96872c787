"""A model's own subclass of a mapped torch distribution converts and runs: Dreamer's world model defines
``class OneHotDist(torchd.one_hot_categorical.OneHotCategorical)`` (super().__init__(logits=...), mode() and sample()
overridden, super().logits / super().probs read through super()), wraps it in Independent, calls ``dist.mode()`` and
takes the KL of two of them. Before OneHotCategorical had an entry the port kept torch's class (MP104)."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import torch

from mindport.migrator import convert_source
from tests.source_module import load_source

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import distributions as torchd


    class OneHotDist(torchd.one_hot_categorical.OneHotCategorical):
        def __init__(self, logits=None, probs=None, unimix_ratio=0.0):
            if logits is not None and unimix_ratio > 0.0:
                probs = F.softmax(logits, dim=-1)
                probs = probs * (1.0 - unimix_ratio) + unimix_ratio / probs.shape[-1]
                logits = torch.log(probs)
                super().__init__(logits=logits, probs=None)
            else:
                super().__init__(logits=logits, probs=probs)

        def mode(self):
            picked = F.one_hot(torch.argmax(super().logits, axis=-1), super().logits.shape[-1])
            return picked.detach() + super().logits - super().logits.detach()

        def sample(self, sample_shape=(), seed=None):
            draw = super().sample(sample_shape)
            probs = super().probs
            while len(probs.shape) < len(draw.shape):
                probs = probs[None]
            draw += probs - probs.detach()
            return draw


    def dist(z):
        return torchd.independent.Independent(OneHotDist(logits=z, unimix_ratio=0.01), 1)


    def run(z, y):
        d = dist(z)
        s = d.sample((3,))
        kl = torchd.kl.kl_divergence(dist(z), dist(y))
        return d.log_prob(d.mode()), d.entropy(), d.mean, kl, s.shape, s.sum(-1)


    def sampled_loss(z, w):
        return (dist(z).sample() * w).sum()
""")


def test_dreamer_one_hot_subclass_converts_and_matches_torch(tmp_path):
    result = convert_source(SOURCE)
    assert "MP104" not in str(result.diagnostics) and "import torch" not in result.code, result.code
    torch_mod = load_source(SOURCE, tmp_path, "dreamer_torch")
    ms_mod = load_source(result.code, tmp_path, "dreamer_ms")
    rng = np.random.default_rng(3)
    z, y, w = (rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(3))
    expected = torch_mod.run(torch.tensor(z), torch.tensor(y))
    got = ms_mod.run(ms.Tensor(z), ms.Tensor(y))
    for e, g in zip(expected[:4], got[:4]):
        np.testing.assert_allclose(g.asnumpy(), e.numpy(), rtol=1e-5, atol=1e-5)
    assert tuple(got[4]) == tuple(expected[4]) == (3, 2, 3, 4)
    np.testing.assert_allclose(got[5].asnumpy(), np.ones((3, 2, 3)), atol=1e-6)  # one-hot draws (+ 0 forward)
    # the straight-through sample: its gradient is that of the probabilities, the same in both
    zt = torch.tensor(z, requires_grad=True)
    torch_mod.sampled_loss(zt, torch.tensor(w)).backward()
    grad = ms.grad(ms_mod.sampled_loss)(ms.Tensor(z), ms.Tensor(w))
    np.testing.assert_allclose(grad.asnumpy(), zt.grad.numpy(), rtol=1e-4, atol=1e-6)
