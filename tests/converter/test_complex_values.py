"""Complex values in state-space code (S4D's ``torch.randn(H, N, dtype=torch.cfloat)``, the S4 kernel's
``AP * -1j``): MindSpore 2.10's randn takes float dtypes only, its operators take no Python complex number, and its
Mul/Div have no kernel for a real tensor with a complex one. The converted code draws a complex randn as torch does
(real and imaginary parts N(0, 1/2) each) and computes a Python complex number with a tensor in complex."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

OPERANDS = textwrap.dedent("""\
    import torch


    def run(a, b, d):
        z = torch.complex(a, b)
        w = a * -1j + 2
        return (z * 1j, 1j * a, a / (1 + 2j), z - 0.5j, 2j + z, w, (a * 2) ** complex(0, 1), d * 1j,
                torch.arange(3) * 1j, 3 * 2j)
""")


def test_python_complex_numbers_with_tensors_compute_in_complex(tmp_path):
    import mindspore as ms
    import torch

    result = convert_source(OPERANDS)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "mp_math.complex_operation('*', z, (0.0, 1.0))" in result.code and "3 * 2j" in result.code
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    d = rng.standard_normal(4)  # float64: complex128 in torch
    want = load_module(OPERANDS, tmp_path / "t_cx.py", "t_cx").run(*(torch.from_numpy(v) for v in (a, b, d)))
    got = load_module(result.code, tmp_path / "m_cx.py", "m_cx").run(*(ms.Tensor(v) for v in (a, b, d)))
    assert len(got) == len(want)
    for g, w in zip(got[:-1], want[:-1]):
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", "").lower(), (g.dtype, w.dtype)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    assert got[-1] == want[-1] == 6j


RANDN = textwrap.dedent("""\
    import torch


    def draw(n):
        return torch.randn(n, 2, dtype=torch.cfloat), torch.randn((n, 2), dtype=torch.complex128), torch.rand(n, 2, dtype=torch.cfloat)
""")


@pytest.mark.parametrize("seed", [0])
def test_complex_randn_draws_like_torch(tmp_path, seed):
    import mindspore as ms
    import torch

    result = convert_source(RANDN)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    ms.set_seed(seed)
    torch.manual_seed(seed)
    n = 20000
    want = load_module(RANDN, tmp_path / "t_rn.py", "t_rn").draw(n)
    got = load_module(result.code, tmp_path / "m_rn.py", "m_rn").draw(n)
    for g, w in zip(got, want):
        g, w = g.asnumpy(), w.numpy()
        assert g.dtype == w.dtype and g.shape == w.shape
        for part in (np.real, np.imag):  # the same distribution: mean and variance of each part agree
            assert abs(part(g).mean() - part(w).mean()) < 0.03
            assert abs(part(g).var() - part(w).var()) < 0.03
    assert abs(np.real(want[0].numpy()).var() - 0.5) < 0.03  # torch's parts are N(0, 1/2)


DIAG = textwrap.dedent("""\
    import torch


    def run(a, b, mask):
        w = torch.complex(a, b)
        v = torch.complex(b.unsqueeze(-1) * a.unsqueeze(-2), a.unsqueeze(-1) - b.unsqueeze(-2))
        return (torch.diag_embed(w), w.diag_embed(1, 0, 2), v @ torch.diag_embed(w) @ v.conj().transpose(-1, -2),
                torch.diag_embed(mask), torch.diag_embed(a, -1))
""")


def test_diag_embed_of_complex_and_bool_inputs(tmp_path):
    """S4's ``V @ torch.diag_embed(W) @ V.conj().transpose(-1, -2)``: ops.diag_embed refuses complex (and bool)
    inputs."""
    import mindspore as ms
    import torch

    result = convert_source(DIAG)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    mask = rng.standard_normal((2, 3)) > 0
    want = load_module(DIAG, tmp_path / "t_de.py", "t_de").run(*(torch.from_numpy(v) for v in (a, b, mask)))
    got = load_module(result.code, tmp_path / "m_de.py", "m_de").run(*(ms.Tensor(v) for v in (a, b, mask)))
    for g, w in zip(got, want, strict=True):
        assert g.asnumpy().dtype == w.numpy().dtype
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-5)


KERNEL = textwrap.dedent("""\
    import torch


    def run(log_dt, c, log_a, a_imag, steps):
        dt = torch.exp(log_dt)
        C = torch.view_as_complex(c)
        A = -torch.exp(log_a) + 1j * a_imag
        dtA = A * dt.unsqueeze(-1)
        K = dtA.unsqueeze(-1) * torch.arange(steps)
        C = C * (torch.exp(dtA) - 1.) / A
        K = 2 * torch.einsum('hn, hnl -> hl', C, torch.exp(K)).real
        z = torch.complex(log_dt, log_dt)
        return K, dt * 2, z.conj() * log_dt, z.abs() * log_dt
""")


def test_arithmetic_of_complex_tensors_with_real_ones(tmp_path):
    """S4D's Vandermonde kernel: ``A * dt.unsqueeze(-1)`` multiplies a complex tensor by a real one, which MindSpore
    has no kernel for ("Select CPU operator[Mul] fail"). The converter follows the names bound to complex values in a
    function (a complex number, view_as_complex, arithmetic and torch functions of them) and computes their
    arithmetic in complex; real arithmetic (``dt * 2``, ``z.abs() * x``) stays as written."""
    import mindspore as ms
    import torch

    result = convert_source(KERNEL)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "K, dt * 2, mp_math.complex_operation('*', z.conj(), log_dt), mp_math.abs(z) * log_dt" in result.code
    rng = np.random.default_rng(2)
    h, n = 3, 4
    inputs = (rng.uniform(-3, -1, h).astype(np.float32), rng.standard_normal((h, n, 2)).astype(np.float32),
              rng.uniform(-1, 0, (h, n)).astype(np.float32), rng.uniform(0, 3, (h, n)).astype(np.float32))
    want = load_module(KERNEL, tmp_path / "t_k.py", "t_k").run(*(torch.from_numpy(v) for v in inputs), 6)
    got = load_module(result.code, tmp_path / "m_k.py", "m_k").run(*(ms.Tensor(v) for v in inputs), 6)
    for g, w in zip(got, want, strict=True):
        assert g.asnumpy().dtype == w.numpy().dtype
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-4, atol=1e-5)


REARRANGED = textwrap.dedent("""\
    import torch
    from torch.fft import rfft, irfft
    from einops import rearrange


    def run(lambda_real, lambda_imag, u, residual):
        n = u.shape[-2]
        Lambda = -lambda_real.exp() + 1j * lambda_imag
        arange = torch.arange(n)
        S = (rearrange(Lambda, 'n -> n 1') * rearrange(arange, 'l -> 1 l')).exp()
        K = torch.einsum('n l, n -> l', S, Lambda).real
        K = rearrange(K, 'l -> l 1')
        y = irfft(rfft(u, n=2 * n, dim=-2) * rfft(K, n=2 * n, dim=-2), n=2 * n, dim=-2)[..., :n, :]
        return y + residual, S.abs()
""")


def test_complex_values_through_einops_and_real_fft_results(tmp_path):
    """The gated state space kernel (lucidrains' GSS): ``rearrange(Lambda, 'n -> n 1') * rearrange(arange, ...)``
    multiplies a complex tensor by an int64 one (einops gives back what it is given: complex), which MindSpore's Mul
    refuses; ``irfft(...)`` is real, so ``y + residual`` stays the plain operator."""
    import mindspore as ms
    import torch

    result = convert_source(REARRANGED)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert "return y + residual" in result.code, result.code
    rng = np.random.default_rng(3)
    inputs = (rng.uniform(0, 1, 4).astype(np.float32), rng.uniform(0, 1, 4).astype(np.float32),
              rng.standard_normal((2, 6, 1)).astype(np.float32), rng.standard_normal((2, 6, 1)).astype(np.float32))
    want = load_module(REARRANGED, tmp_path / "t_r.py", "t_r").run(*(torch.from_numpy(v) for v in inputs))
    got = load_module(result.code, tmp_path / "m_r.py", "m_r").run(*(ms.Tensor(v) for v in inputs))
    for g, w in zip(got, want, strict=True):
        assert g.asnumpy().dtype == w.numpy().dtype
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-4, atol=1e-5)


FILLS = textwrap.dedent("""\
    import torch


    def run(x, m):
        y = x.clone()
        y.masked_fill_(m, 1j)
        return x.masked_fill(m, 0.+0.j), torch.masked_fill(x, m, 2 - 1j), y, x.real.masked_fill(m, 0.5)
""")


def test_complex_fill_values(tmp_path):
    """``freqs.masked_fill(amp < top, 0.+0.j)`` (ETSformer's frequency attention): MindSpore's masked_fill takes no
    Python complex number; the converted call passes a complex64 tensor (the in-place form one of the input's
    dtype), and a real fill value stays as written."""
    import mindspore as ms
    import torch

    result = convert_source(FILLS)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    x = (np.arange(6) - 2 + 1j * np.arange(6)).astype(np.complex64)
    m = np.array([True, False, True, False, False, True])
    want = load_module(FILLS, tmp_path / "t_f.py", "t_f").run(torch.from_numpy(x), torch.from_numpy(m))
    got = load_module(result.code, tmp_path / "m_f.py", "m_f").run(ms.Tensor(x), ms.Tensor(m))
    for g, w in zip(got, want, strict=True):
        assert g.asnumpy().dtype == w.numpy().dtype
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())


DFT_DECOMPOSITION = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class DFTDecomp(nn.Module):
        def __init__(self, top_k=2):
            super().__init__()
            self.top_k = top_k

        def forward(self, x):
            xf = torch.fft.rfft(x)
            freq = abs(xf)
            top_k_freq, top_list = torch.topk(freq, self.top_k)
            xf[freq <= top_k_freq.min()] = 0
            x_season = torch.fft.irfft(xf)
            return x_season, x - x_season, freq
""")


def test_builtin_abs_of_a_complex_value_is_its_real_modulus(tmp_path):
    """TimeMixer's DFT decomposition: ``freq = abs(torch.fft.rfft(x))`` is real in torch; MindSpore's ``__abs__``
    keeps complex64 and ``topk`` then refused it. The builtin ``abs`` of an evidently complex value is torch.abs's
    target, and the port matches torch."""
    from port_check import assert_port_matches_in_mode

    code = convert_source(DFT_DECOMPOSITION).code
    assert "abs(xf)" not in code.replace("mp_math.abs(xf)", ""), code
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    assert_port_matches_in_mode(DFT_DECOMPOSITION, code, "DFTDecomp", [x], tmp_path, "dft_abs", "pynative",
                                rtol=1e-5, atol=1e-5)
