"""``x.type(d)`` where ``d`` is a dtype by the code's own flow becomes MindSpore's ``x.astype(d)``, no
``mp_tensor.type`` (issue 30: "dtypes from creation and flow"). The runtime ``type`` decides on its argument's value
(a dtype, a torch type name such as ``'torch.DoubleTensor'``, nothing); these names can only hold a dtype:

* a local bound only to ``y.dtype`` / a torch dtype, also as an element of a tuple display (x-transformers'
  ``seq_len, orig_dtype = t.shape[-2], t.dtype``; its attend's ``i, j, dtype = *sim.shape[-2:], sim.dtype``);
* a parameter defaulting to a torch dtype, of a module-level function every call in the file gives a dtype there or
  nothing (vit-pytorch's simple_vit ``posemb_sincos_2d(..., dtype=torch.float32)``);
* a ``@property`` returning ``.dtype`` (improved-diffusion's ``self.inner_dtype``).

Kept on the runtime (code check): a parameter a call gives a type name string, a loop variable. The model runs
against torch in PyNative and GRAPH_MODE, values and dtypes (float16, float32 and float64 results)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from port_check import load_module

SRC = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def posemb(h, dim, temperature: int = 10000, dtype=torch.float32):
        y = torch.arange(h).float()[:, None] * torch.arange(dim).float()[None, :] / temperature
        pe = torch.cat((y.sin(), y.cos()), dim=1)
        return pe.type(dtype)


    def kept(x, dtype=torch.float32):
        return x.type(dtype)


    def rotate(t, freqs):
        seq_len, orig_dtype = t.shape[-2], t.dtype
        out = t.float() * freqs[:seq_len]
        return out.type(orig_dtype)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)
            self.register_buffer("pe", posemb(4, 4))
            self.register_buffer("pe2", posemb(4, 4, dtype=torch.float64))
            self.k = kept(torch.ones(2), "torch.DoubleTensor")

        @property
        def inner_dtype(self):
            return self.fc.weight.dtype

        def forward(self, x):
            i, j, dtype = *x.shape[-2:], x.dtype
            h = self.fc(x.type(self.inner_dtype))
            r = rotate(h.half(), self.pe)
            for dt in (torch.float32,):
                h = h.type(dt)
            return h.type(dtype) + self.pe2.type(dtype), r, self.pe2 * 2
''')


def test_dtype_names_become_astype():
    code = convert_source(SRC).code
    for native in ("return pe.astype(dtype)", "return out.astype(orig_dtype)", "x.astype(self.inner_dtype)",
                   "h.astype(dtype) + self.pe2.astype(dtype)"):
        assert native in code, code
    # a string reaches kept's dtype; dt is a loop variable: the runtime decides there
    assert "mp_tensor.type(x, dtype=dtype)" in code and "mp_tensor.type(h, dtype=dt)" in code, code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_dtype_names_match_torch(tmp_path, mode):
    import mindspore as ms
    import torch

    code = convert_source(SRC).code
    torch_net = load_module(SRC, tmp_path / "t_flow.py", "t_flow").Net().eval()
    ms_net = load_module(code, tmp_path / f"m_flow_{mode}.py", f"m_flow_{mode}").Net()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32)
    with torch.no_grad():
        want = [t.numpy() for t in torch_net(torch.from_numpy(x))]
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = [t.asnumpy() for t in ms_net(ms.Tensor(x))]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert [(g.dtype, g.shape) for g in got] == [(w.dtype, w.shape) for w in want]  # float32, float16, float64
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-3 if g.dtype == np.float16 else 1e-5, atol=1e-3)
