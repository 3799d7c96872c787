"""``.new(...)``, torch's legacy constructor, on a receiver the converter cannot type (disc46, heykeetae/
Self-Attention-GAN's SpectralNorm: ``w = getattr(self.module, self.name); u = w.data.new(height).normal_(0, 1)``).
``new`` is among the names other objects share, so it was rewritten on evident tensors only and left as written here:
MindSpore's Tensor has no ``new`` (AttributeError at run time) and the line was not flagged. It is now rewritten on a
receiver of unknown kind (table.RECEIVER_DISPATCHED_NAMES), and the runtime helper answers an object that is no tensor
with that object's own ``new``; a module's ``new`` (hashlib) stays as written."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import hashlib

    import torch
    import torch.nn as nn


    class Pool:
        def new(self, n):
            return [0.5] * n


    def widths(pool, n):
        return pool.new(n)


    class Normed(nn.Module):
        def __init__(self, module, name="weight"):
            super().__init__()
            self.module = module
            w = getattr(self.module, name)
            height = w.data.shape[0]
            self.register_buffer("u", w.data.new(height).fill_(1.0) / height)
            self.tag = hashlib.new("sha256", b"x").hexdigest()[:4]

        def forward(self, x):
            w = getattr(self.module, "weight")
            scale = w.data.new(1).fill_(2.0)
            extra = torch.tensor(widths(Pool(), 2)).sum()
            return self.module(x) * scale + self.u.sum() + extra
""")


def test_new_on_a_receiver_of_unknown_kind_is_torchs_legacy_constructor(tmp_path):
    import mindspore as ms
    import torch

    out = convert_source(SOURCE)
    assert "mp_tensor.new(w.data, height)" in out.code and "mp_tensor.new(w.data, 1)" in out.code, out.code
    assert 'hashlib.new("sha256", b"x")' in out.code, out.code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    torch.manual_seed(0)
    tm = load_module(SOURCE, tmp_path / "t_new.py", "t_new").Normed(torch.nn.Linear(4, 5))
    mm = load_module(out.code, tmp_path / "m_new.py", "m_new").Normed(ms.nn.Dense(4, 5))
    mm.module.weight.set_data(ms.Tensor(tm.module.weight.detach().numpy()))
    mm.module.bias.set_data(ms.Tensor(tm.module.bias.detach().numpy()))
    with torch.no_grad():
        want = tm(torch.from_numpy(x)).numpy()
    got = mm(ms.Tensor(x)).asnumpy()
    assert mm.tag == tm.tag
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
