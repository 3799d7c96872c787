"""``abs`` of a tensor that is real by construction is MindSpore's ``ops.abs``, no ``mp_math.abs`` (issue 30). The
runtime abs decides one thing: a complex input's modulus is real (``ops.ComplexAbs``), where ``ops.abs`` keeps
complex; on any real input it is ``ops.abs`` itself. native_facts.RealFacts proves "real" from the function's code:
constructors (``torch.arange(0, n, step=s)``, whose dtype depends on ``n`` but which refuses a complex bound),
``meshgrid``/``stack`` of reals, arithmetic and indexing of reals, ``map(lambda t: rearrange(...), (q, k))`` of reals,
and the float facts (a layer's output). The slice: vit-pytorch's LeViT relative positions (int64, in ``__init__``),
x-transformers' ``(n[:, None] - n[None, :]).abs()`` in ``forward``, a Linear's output; kept: a parameter (``c``) and
an FFT's result (complex). Values and dtypes against torch, PyNative and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from port_check import load_module

SRC = textwrap.dedent('''\
    import torch
    import torch.nn as nn
    from einops import rearrange


    class Net(nn.Module):
        def __init__(self, fmap_size=4, stride=2):
            super().__init__()
            q_range = torch.arange(0, fmap_size, step=stride)
            k_range = torch.arange(fmap_size)
            q_pos = torch.stack(torch.meshgrid(q_range, q_range, indexing='ij'), dim=-1)
            k_pos = torch.stack(torch.meshgrid(k_range, k_range, indexing='ij'), dim=-1)
            q_pos, k_pos = map(lambda t: rearrange(t, 'i j c -> (i j) c'), (q_pos, k_pos))
            rel_pos = (q_pos[:, None, ...] - k_pos[None, :, ...]).abs()
            self.register_buffer("rel", rel_pos.sum(-1))
            self.fc = nn.Linear(8, 8)

        def forward(self, x, c):
            n = torch.arange(x.shape[1])
            d = (n[:, None] - n[None, :]).abs()
            h = self.fc(x)
            return torch.abs(h) + d.float().sum(), c.abs(), torch.abs(-h * 2 - 1), self.rel * 1, d


    def spectrum(x):
        return torch.fft.fft(x).abs()
''')


def test_real_inputs_take_ops_abs():
    code = convert_source(SRC).code
    for native in ("rel_pos = ops.abs((q_pos[:, None, ...] - k_pos[None, :, ...]))", "d = ops.abs((n[:, None] - n[None, :]))",
                   "ops.abs(h)", "ops.abs(-h * 2 - 1)"):
        assert native in code, code
    assert "mp_math.abs(c)" in code, code  # a parameter: complex or not is decided at run time
    assert "def spectrum(x):\n    return mp_math.abs(" in code, code  # an FFT: complex


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_real_abs_matches_torch(tmp_path, mode):
    import mindspore as ms
    import torch

    code = convert_source(SRC).code.split("\n\ndef spectrum")[0]  # the model only
    torch_net = load_module(SRC, tmp_path / "t_abs.py", "t_abs").Net().eval()
    ms_net = load_module(code, tmp_path / f"m_abs_{mode}.py", f"m_abs_{mode}").Net()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    c = rng.standard_normal((3,)).astype(np.float64)
    with torch.no_grad():
        want = [t.numpy() for t in torch_net(torch.from_numpy(x), torch.from_numpy(c))]
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = [t.asnumpy() for t in ms_net(ms.Tensor(x), ms.Tensor(c))]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert [(g.dtype, g.shape) for g in got] == [(w.dtype, w.shape) for w in want]  # float32, float64, int64
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
