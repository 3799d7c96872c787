"""Python's ``abs`` of a complex value (batch 6, TimeMixer's DFT decomposition: ``xf = torch.fft.rfft(x);
freq = abs(xf); torch.topk(freq, k)``): torch's modulus is real; MindSpore's ``Tensor.__abs__`` kept complex64 and
TopK refused it. An evidently complex argument goes through torch.abs's entry; a real one keeps Python's abs."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch


    def decompose(x, k):
        xf = torch.fft.rfft(x)
        freq = abs(xf)
        freq[0] = 0
        top, _ = torch.topk(freq, k)
        xf[freq <= top.min()] = 0
        return torch.fft.irfft(xf), freq, abs(x)
""")


def test_abs_of_a_complex_value_is_real_and_matches_torch(tmp_path):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    assert "abs(x)" in code and "freq = abs(xf)" not in code, code
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    want = load_module(SOURCE, tmp_path / "t_cabs.py", "t_cabs").decompose(torch.from_numpy(x), 3)
    got = load_module(code, tmp_path / "m_cabs.py", "m_cabs").decompose(ms.Tensor(x), 3)
    for w, g in zip(want, got):
        assert g.asnumpy().dtype == w.numpy().dtype  # float32: the modulus, not a complex64 holding it
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-5)
