"""torch.signal.windows on MindSpore: the window functions with torch's formulas (sym / periodic, float32 by default).

MindSpore 2.10 has ops.hann_window/hamming_window/... with torch.*_window's ``periodic`` argument but nothing for
torch.signal.windows' ``sym`` family (exponential, gaussian, cosine, general_cosine ...). Each function builds the
window from a linspace in the requested dtype as torch does; lengths 0 and 1 give an empty window and ``[1.]``.
"""
from __future__ import annotations

import math

import mindspore as ms
from mindspore import ops

from mindport.runtime.math import linspace as _linspace


def _dtype(dtype):
    return ms.float32 if dtype is None else dtype


def _empty(dtype):
    return ops.zeros((0,), _dtype(dtype))


def _general_cosine(M, a, sym, dtype):
    dtype = _dtype(dtype)
    if M == 0:
        return _empty(dtype)
    if M == 1:
        return ops.ones((1,), dtype)
    a = list(a)
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0.0, (M - 1) * constant, M, dtype=dtype)
    out = ops.zeros((M,), dtype)
    for i, w in enumerate(a):
        # the coefficient as a tensor of dtype: a Python float times a float64 tensor is rounded to float32 on 2.10
        out = out + ms.Tensor((-1) ** i * w, dtype) * ops.cos(i * k)
    return out


def general_cosine(M, *, a, sym=True, dtype=None):
    """torch.signal.windows.general_cosine: sum_i (-1)^i a_i cos(i k)."""
    return _general_cosine(M, a, sym, dtype)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None):
    """torch.signal.windows.general_hamming: general_cosine with a = [alpha, 1 - alpha]."""
    return _general_cosine(M, [alpha, 1.0 - alpha], sym, dtype)


def hann(M, *, sym=True, dtype=None):
    """torch.signal.windows.hann: general_hamming with alpha 0.5."""
    return _general_cosine(M, [0.5, 0.5], sym, dtype)


def hamming(M, *, sym=True, dtype=None):
    """torch.signal.windows.hamming: general_hamming with alpha 0.54."""
    return _general_cosine(M, [0.54, 1.0 - 0.54], sym, dtype)


def blackman(M, *, sym=True, dtype=None):
    """torch.signal.windows.blackman: general_cosine with a = [0.42, 0.5, 0.08]."""
    return _general_cosine(M, [0.42, 0.5, 0.08], sym, dtype)


def nuttall(M, *, sym=True, dtype=None):
    """torch.signal.windows.nuttall: general_cosine with Nuttall's four coefficients."""
    return _general_cosine(M, [0.3635819, 0.4891775, 0.1365995, 0.0106411], sym, dtype)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None):
    """torch.signal.windows.exponential: exp(-|k|) around center, decay tau."""
    dtype = _dtype(dtype)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype=dtype)
    return ops.exp(-ops.abs(k))


def gaussian(M, *, std=1.0, sym=True, dtype=None):
    """torch.signal.windows.gaussian: exp(-k^2) with k spaced by 1 / (std sqrt 2)."""
    dtype = _dtype(dtype)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype)
    return ops.exp(-(k ** 2))


def cosine(M, *, sym=True, dtype=None):
    """torch.signal.windows.cosine: sin over half a period."""
    dtype = _dtype(dtype)
    if M == 0:
        return _empty(dtype)
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(0.5 * constant, (0.5 + (M - 1)) * constant, M, dtype=dtype)
    return ops.sin(k)


def bartlett(M, *, sym=True, dtype=None):
    """torch.signal.windows.bartlett: the triangle 1 - |k|."""
    dtype = _dtype(dtype)
    if M == 0:
        return _empty(dtype)
    if M == 1:
        return ops.ones((1,), dtype)
    constant = 2 / (M if not sym else M - 1)
    k = _linspace(-1.0, -1.0 + (M - 1) * constant, M, dtype=dtype)
    return 1 - ops.abs(k)


def kaiser(M, *, beta=12.0, sym=True, dtype=None):
    """torch.signal.windows.kaiser: I0(sqrt(beta^2 - k^2)) / I0(beta)."""
    dtype = _dtype(dtype)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype)
    if M == 1:
        return ops.ones((1,), dtype)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = min(beta, start + (M - 1) * constant)
    k = _linspace(start, end, M, dtype=dtype)
    beta_t = ms.Tensor(beta, dtype)
    return ops.bessel_i0(ops.sqrt(beta_t * beta_t - k ** 2)) / ops.bessel_i0(beta_t)
