"""torch 1.x's ``torch.rfft`` / ``torch.irfft`` (removed in torch 1.8; complex values as a trailing axis of size 2):
old Fourier Neural Operator, FullSubNet and audio code calls them. Before, neither side ran: the torch reference
stopped at "module 'torch' has no attribute 'rfft'" and the converter left the call (MP103, no mapping entry).

Now the reference side gets both back (``mindport.discovery.legacy_torch``: what torch 1.7 documented) and the
converter maps them to ``mindport.runtime.special.legacy_rfft`` / ``legacy_irfft`` (MindSpore's rfftn/fftn/irfftn).
Checked here: the torch side against NumPy's FFT (an oracle independent of both), the MindSpore side against the
torch side over dtypes, shapes, ``normalized``, ``onesided``, ``signal_ndim`` 1-3 and ``signal_sizes``, and an
FNO-style model of our own written with the old functions, converted and proven (PyNative and GRAPH_MODE)."""
from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

SHAPES = {1: (2, 3, 10), 2: (2, 5, 6), 3: (2, 4, 5, 6)}  # even and odd last axes
ODD_SHAPES = {1: (3, 9), 2: (2, 5, 7), 3: (1, 3, 4, 5)}


def _legacy():
    import torch  # noqa: F401

    from mindport.discovery import legacy_torch

    legacy_torch.install()
    return legacy_torch


def _np_rfft(x, nd, normalized, onesided):
    axes = tuple(range(-nd, 0))
    norm = "ortho" if normalized else "backward"
    out = (np.fft.rfftn if onesided else np.fft.fftn)(x, axes=axes, norm=norm)
    return np.stack([out.real, out.imag], axis=-1)


@pytest.mark.parametrize(("nd", "normalized", "onesided", "odd"),
                         list(itertools.product((1, 2, 3), (False, True), (False, True), (False, True))))
def test_torch_side_is_torch_1x_rfft_and_irfft(nd, normalized, onesided, odd):
    """The reference's functions against NumPy: rfft is the DFT over the last signal_ndim axes (ortho when
    normalized, half of the last axis when onesided), irfft inverts it (signal_sizes recovers an odd last axis)."""
    import torch

    legacy = _legacy()
    x = np.random.default_rng(nd).standard_normal((ODD_SHAPES if odd else SHAPES)[nd])
    spec = legacy.rfft(torch.tensor(x), nd, normalized=normalized, onesided=onesided)
    expected = _np_rfft(x, nd, normalized, onesided)
    assert spec.shape == expected.shape and spec.dtype == torch.float64
    np.testing.assert_allclose(spec.numpy(), expected, rtol=1e-10, atol=1e-10)
    back = legacy.irfft(spec, nd, normalized=normalized, onesided=onesided, signal_sizes=x.shape[-nd:])
    np.testing.assert_allclose(back.numpy(), x, rtol=1e-10, atol=1e-10)
    if not odd:  # the default output size: 2 * (n - 1) on a onesided input, the input's own size on a full one
        default = legacy.irfft(spec, nd, normalized=normalized, onesided=onesided)
        assert tuple(default.shape) == x.shape
        np.testing.assert_allclose(default.numpy(), x, rtol=1e-10, atol=1e-10)
    norm = "ortho" if normalized else "backward"
    full = np.fft.fftn(x, axes=tuple(range(-nd, 0)), norm=norm)
    if not onesided:  # a full (Hermitian) spectrum: irfft is the real inverse DFT
        np.testing.assert_allclose(back.numpy(), np.fft.ifftn(full, axes=tuple(range(-nd, 0)), norm=norm).real,
                                   rtol=1e-10, atol=1e-10)
    with pytest.raises(RuntimeError, match="signal_ndim"):
        legacy.rfft(torch.tensor(x), 4)


def test_install_puts_them_on_torch_imported_later():
    """Installed before torch is imported (the discovery's sitecustomize), the functions are there once it is."""
    code = ("from mindport.discovery import legacy_torch\n"
            "legacy_torch.install()\n"
            "import sys; assert 'torch' not in sys.modules\n"
            "import torch\n"
            "assert torch.rfft is legacy_torch.rfft and torch.irfft is legacy_torch.irfft\n"
            "x = torch.randn(2, 8)\n"
            "assert torch.allclose(torch.irfft(torch.rfft(x, 1), 1), x, atol=1e-6)\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


_CASES = [(nd, normalized, onesided, dtype, odd)
          for nd in (1, 2, 3) for normalized in (False, True) for onesided in (False, True)
          for dtype in ("float32", "float64") for odd in (False, True)]


@pytest.mark.parametrize(("nd", "normalized", "onesided", "dtype", "odd"), _CASES)
def test_mindspore_side_matches_the_torch_side(nd, normalized, onesided, dtype, odd):
    """mindport.runtime.special.legacy_rfft / legacy_irfft against the reference's functions, on a real signal's
    spectrum and on a random (not Hermitian) one, whose bins the inverse must treat as torch's does."""
    import mindspore as ms
    import torch

    from mindport.runtime.special import legacy_irfft, legacy_rfft

    legacy = _legacy()
    rng = np.random.default_rng(7 * nd + odd)
    x = rng.standard_normal((ODD_SHAPES if odd else SHAPES)[nd]).astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    t_spec = legacy.rfft(torch.tensor(x), nd, normalized, onesided)
    m_spec = legacy_rfft(ms.Tensor(x), nd, normalized, onesided)
    assert m_spec.shape == tuple(t_spec.shape) and str(m_spec.dtype).lower() == dtype
    np.testing.assert_allclose(m_spec.asnumpy(), t_spec.numpy(), **tol)
    sizes = list(x.shape[-nd:])
    for spectrum in (t_spec.numpy(), rng.standard_normal(t_spec.shape).astype(dtype)):
        for signal_sizes in (sizes, None):
            t_out = legacy.irfft(torch.tensor(spectrum), nd, normalized, onesided, signal_sizes)
            m_out = legacy_irfft(ms.Tensor(spectrum), nd, normalized, onesided, signal_sizes)
            assert m_out.shape == tuple(t_out.shape), (signal_sizes, m_out.shape, t_out.shape)
            np.testing.assert_allclose(m_out.asnumpy(), t_out.numpy(), **tol)


FNO_MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


def cmul_1d(a, w):
    """(batch, in, k, 2) x (in, out, k, 2) -> (batch, out, k, 2), complex numbers as pairs."""
    re = torch.einsum("bik,iok->bok", a[..., 0], w[..., 0]) - torch.einsum("bik,iok->bok", a[..., 1], w[..., 1])
    im = torch.einsum("bik,iok->bok", a[..., 1], w[..., 0]) + torch.einsum("bik,iok->bok", a[..., 0], w[..., 1])
    return torch.stack([re, im], dim=-1)


def cmul_2d(a, w):
    re = torch.einsum("bixy,ioxy->boxy", a[..., 0], w[..., 0]) - torch.einsum("bixy,ioxy->boxy", a[..., 1], w[..., 1])
    im = torch.einsum("bixy,ioxy->boxy", a[..., 1], w[..., 0]) + torch.einsum("bixy,ioxy->boxy", a[..., 0], w[..., 1])
    return torch.stack([re, im], dim=-1)


class SpectralConv1d(nn.Module):
    def __init__(self, in_channels=3, out_channels=4, modes=5):
        super().__init__()
        self.out_channels, self.modes = out_channels, modes
        self.weights = nn.Parameter(torch.rand(in_channels, out_channels, modes, 2) / (in_channels * out_channels))

    def forward(self, x):
        n = x.size(-1)
        x_ft = torch.rfft(x, 1, normalized=True, onesided=True)
        out_ft = torch.zeros(x.size(0), self.out_channels, n // 2 + 1, 2)
        out_ft[:, :, :self.modes] = cmul_1d(x_ft[:, :, :self.modes], self.weights)
        return torch.irfft(out_ft, 1, normalized=True, onesided=True, signal_sizes=(n,))


class SpectralConv2d(nn.Module):
    def __init__(self, in_channels=3, out_channels=3, modes1=3, modes2=3):
        super().__init__()
        self.out_channels, self.m1, self.m2 = out_channels, modes1, modes2
        scale = 1.0 / (in_channels * out_channels)
        self.w1 = nn.Parameter(scale * torch.rand(in_channels, out_channels, modes1, modes2, 2))
        self.w2 = nn.Parameter(scale * torch.rand(in_channels, out_channels, modes1, modes2, 2))

    def forward(self, x):
        b, h, w = x.shape[0], x.shape[-2], x.shape[-1]
        x_ft = torch.rfft(x, 2)
        out_ft = torch.zeros(b, self.out_channels, h, w // 2 + 1, 2)
        out_ft[:, :, :self.m1, :self.m2] = cmul_2d(x_ft[:, :, :self.m1, :self.m2], self.w1)
        out_ft[:, :, -self.m1:, :self.m2] = cmul_2d(x_ft[:, :, -self.m1:, :self.m2], self.w2)
        return torch.irfft(out_ft, 2, signal_sizes=(h, w))


class FNO1d(nn.Module):
    def __init__(self, width=4, modes=4):
        super().__init__()
        self.lift = nn.Linear(2, width)
        self.spectral = SpectralConv1d(width, width, modes)
        self.pointwise = nn.Conv1d(width, width, 1)
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        h = self.lift(x).permute(0, 2, 1)
        h = F.relu(self.spectral(h) + self.pointwise(h))
        return self.head(h.permute(0, 2, 1))
'''


def test_an_fno_written_with_torch_1x_fft_converts_and_is_proven(tmp_path):
    from mindport.discovery.prove import prove_models
    from mindport.migrator import convert_source
    from mindport.migrator.repo import convert_path

    result = convert_source(FNO_MODEL)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "legacy_rfft(" in result.code and "legacy_irfft(" in result.code
    assert "torch" not in result.code.replace("mindport", ""), result.code

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "fno.py").write_text(FNO_MODEL)
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="fno.py:*", cache=False,
                             user_inputs={"fno.py:SpectralConv1d": ["2x3x16:float32"],
                                          "fno.py:SpectralConv2d": ["2x3x8x9:float32"],
                                          "fno.py:FNO1d": ["2x12x2:float32"]})
    by_name = {m["class"].split(":")[-1]: m for m in models}
    assert set(by_name) == {"SpectralConv1d", "SpectralConv2d", "FNO1d"}, list(by_name)
    for name, m in by_name.items():
        assert m["status"] == "proven", (name, m)
        assert m["draws"][0]["graph"] == "ok", (name, m["draws"])  # the port compiled in GRAPH_MODE agrees too
