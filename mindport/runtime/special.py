"""torch.special functions that MindSpore 2.10 lacks or computes inaccurately, built from MindSpore ops; also the
``torch.*`` and Tensor-method aliases of them (``torch.erfinv``, ``Tensor.log1p`` ...), and, in a last section,
torch.fft's hfft/ihfft family (MindSpore's own is unstable on CPU).

Converted code imports this module as ``mp_special``. Each function matches the torch API of the same name (same
arguments, same results) and says why MindSpore needs help. Everything runs on CPU. Linear algebra
(``torch.linalg``) lives in :mod:`mindport.runtime.linalg`.
"""
from __future__ import annotations

import math

import mindspore as ms
from mindspore import ops

from mindport.runtime.math import floating as _floating
from mindport.runtime.math import int_to_float as _int_to_float

_SQRT1_2 = 1.0 / math.sqrt(2.0)

# ---------------------------------------------------------------------------------------------- torch.special


_LOW = (ms.float32, ms.float16, ms.bfloat16)




def _in_float64(fn, input):
    """fn computed in float64 and cast back (float32 and lower inputs)."""
    if input.dtype in _LOW:
        return fn(input.astype(ms.float64)).astype(input.dtype)
    return fn(input)


def log1p(input):
    """torch.special.log1p: MindSpore 2.10's float32 log1p (ops and mint, CPU) is computed as log(1 + x) and
    returns 0 for |x| < 6e-8 (-2.98e-7 for -2.8665e-7); its float64 kernel is accurate, so float32 is done there."""
    return _in_float64(ops.log1p, input)


def expm1(input):
    """torch.special.expm1: MindSpore 2.10's float32 expm1 (ops and mint, CPU) is computed as exp(x) - 1 and
    returns 0 for |x| < 6e-8; its float64 kernel is accurate, so float32 is done there."""
    return _in_float64(ops.expm1, input)


def entr(input):
    """torch.special.entr: -x*log(x) for x > 0, 0 at 0, -inf for x < 0 (NaN stays NaN); no MindSpore op."""
    safe = ops.where(input > 0, input, ops.ones_like(input))
    out = ops.where(input > 0, -input * ops.log(safe), ops.zeros_like(input))
    return ops.where(input < 0, ops.full_like(input, -math.inf), ops.where(ops.isnan(input), input, out))


def ndtr(input):
    """torch.special.ndtr: standard normal CDF, 0.5 * erfc(-x / sqrt(2)) (torch's formula); no MindSpore op."""
    return 0.5 * ops.erfc(-input * _SQRT1_2)


def erfcx(input):
    """torch.special.erfcx: exp(x**2) * erfc(x); no MindSpore op.

    The product is formed in float64 (exact for float32 inputs up to x = 25, where erfc is still a normal float64);
    beyond that the asymptotic series 1/(x*sqrt(pi)) * (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6)) is used, exact to
    float64 rounding there. Negative x overflows to inf as in torch."""
    x = input.astype(ms.float64)
    big = x > 25.0
    xs = ops.where(big, ops.zeros_like(x), x)
    direct = ops.exp(xs * xs) * ops.erfc(xs)
    xb = ops.where(big, x, ops.ones_like(x))
    z = 1.0 / (2.0 * xb * xb)
    asym = (1.0 - z * (1.0 - 3.0 * z * (1.0 - 5.0 * z))) / (xb * math.sqrt(math.pi))
    return ops.where(big, asym, direct).astype(input.dtype)


def log_ndtr(input):
    """torch.special.log_ndtr: log of the normal CDF, accurate in both tails (torch's split at x = -1):
    log(erfcx(-x/sqrt(2))/2) - x^2/2 below, log1p(-erfc(x/sqrt(2))/2) above; no MindSpore op."""
    low = input < -1.0
    xl = ops.where(low, input, -ops.ones_like(input))
    xh = ops.where(low, ops.zeros_like(input), input)
    lower = ops.log(erfcx(-xl * _SQRT1_2) / 2) - xl * xl / 2
    upper = log1p(-ops.erfc(xh * _SQRT1_2) / 2)
    return ops.where(low, lower, upper)


def ndtri(input):
    """torch.special.ndtri: inverse of the normal CDF; no MindSpore op (and ops.erfinv loses accuracy near +-1, so
    sqrt(2)*erfinv(2p-1) is wrong in the tails). Computed in float64: the Abramowitz-Stegun 26.2.23 start (error
    < 4.5e-4) on the smaller tail q = min(p, 1-p), refined by three Newton steps on ndtr(x) = q, then mirrored.
    0 -> -inf, 1 -> inf, outside [0, 1] -> NaN, as in torch."""
    p = input.astype(ms.float64)
    q = ops.minimum(p, 1.0 - p)
    qs = ops.clamp(q, 1e-300, 0.5)
    t = ops.sqrt(-2.0 * ops.log(qs))
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    for _ in range(3):
        pdf = ops.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
        x = x - (0.5 * ops.erfc(-x * _SQRT1_2) - qs) / pdf
    x = ops.where(p > 0.5, -x, x)
    x = ops.where(q == 0, ops.where(p > 0.5, ops.full_like(x, math.inf), ops.full_like(x, -math.inf)), x)
    x = ops.where((p < 0) | (p > 1) | ops.isnan(p), ops.full_like(x, math.nan), x)
    return x.astype(input.dtype)


def erfinv(input):
    """torch.special.erfinv: MindSpore 2.10's erfinv (ops and mint) is wrong near +-1 (measured relative error 1e-5
    at |x| = 0.98-0.99, 1.8e-2 at 0.999, 2.4168 instead of 2.7510 at 0.9999). It is used for |x| < 0.9 (relative
    error <= 1.4e-7 there); beyond, erfinv(x) = sign(x) * ndtri((1 + |x|) / 2) / sqrt(2) in float64."""
    ax = ops.abs(input)
    inner = ops.erfinv(ops.where(ax < 0.9, input, ops.zeros_like(input)))
    p = (1.0 + ops.where(ax < 0.9, ops.ones_like(ax), ax).astype(ms.float64)) / 2
    outer = (ndtri(p) * _SQRT1_2).astype(input.dtype)
    return ops.where(ax < 0.9, inner, ops.where(input < 0, -outer, outer))


def xlogy(input, other):
    """torch.xlogy / torch.special.xlogy / Tensor.xlogy: x * log(y), 0 where x == 0 (unless y is NaN); ops.xlogy
    gives NaN for xlogy(0, 0) (measured on 2.10 CPU)."""
    input, other = _tensors(input, other)
    zero = (input == 0) & ops.logical_not(ops.isnan(other))
    return ops.where(zero, ops.zeros_like(input * other), ops.xlogy(input, other))


def xlog1py(input, other):
    """torch.special.xlog1py: x * log1p(y), 0 where x == 0, NaN where y is NaN; no MindSpore op."""
    input, other = _tensors(input, other)
    out = input * log1p(other)
    out = ops.where(input == 0, ops.zeros_like(out), out)
    return ops.where(ops.isnan(other), ops.full_like(out, math.nan), out)


def spherical_bessel_j0(x):
    """torch.special.spherical_bessel_j0: sin(x)/x, with torch's Taylor series for |x| < 0.5 (1 at x = 0) and 0 at
    +-inf; no MindSpore op."""
    input = x
    x2 = input * input
    series = 1.0 + x2 * (-1.0 / 6 + x2 * (1.0 / 120 + x2 * (-1.0 / 5040 + x2 * (1.0 / 362880 + x2 * (
        -1.0 / 39916800 + x2 * (1.0 / 6227020800))))))
    small = ops.abs(input) < 0.5
    safe = ops.where(small, ops.ones_like(input), input)
    out = ops.where(small, series, ops.sin(safe) / safe)
    return ops.where(ops.isinf(input), ops.zeros_like(out), out)


def _tensors(a, b):
    if not isinstance(a, ms.Tensor):
        a = ms.Tensor(a, b.dtype)
    if not isinstance(b, ms.Tensor):
        b = ms.Tensor(b, a.dtype)
    return a, b


def _polynomial(x, n, first, step, edge=None):
    """P_n(x) from P_0 = 1, P_1 = first(x) and P_{k+1} = step(x, P_k, P_{k-1}, k); 0 for n < 0. ``n`` is a Python
    int or an integer Tensor broadcast against x (torch accepts both). torch switches to a trigonometric form for
    large n inside (-1, 1); the recurrence agrees with it to float rounding."""
    if not isinstance(x, ms.Tensor):
        x = ms.Tensor(x, ms.float32)
    x = _floating(x)
    if isinstance(n, ms.Tensor):
        n_int = n.astype(ms.int64)
        top = max(int(n_int.max()), 1)
        shape = (x + n_int.astype(x.dtype)).shape
        x, n_int = ops.broadcast_to(x, shape), ops.broadcast_to(n_int, shape)
    else:
        n_int, top = int(n), max(int(n), 1)
    p, q = ops.ones_like(x), first(x)
    values = [p, q]
    for k in range(1, top):
        p, q = q, step(x, q, p, k)
        values.append(q)
    if isinstance(n, ms.Tensor):
        out = ops.zeros_like(x)
        for k, value in enumerate(values):
            out = ops.where(n_int == k, value, out)
    else:
        out = values[n_int] if n_int >= 0 else ops.zeros_like(x)
    return out if edge is None else edge(x, n_int, out)


def chebyshev_polynomial_t(x, n):
    """torch.special.chebyshev_polynomial_t: T_n(x) by T_{k+1} = 2x T_k - T_{k-1}; no MindSpore op."""
    return _polynomial(x, n, lambda x: x, lambda x, q, p, k: (x + x) * q - p)


def chebyshev_polynomial_u(x, n):
    """torch.special.chebyshev_polynomial_u: U_n(x), U_1 = 2x, same recurrence as T; no MindSpore op."""
    return _polynomial(x, n, lambda x: x + x, lambda x, q, p, k: (x + x) * q - p)


def chebyshev_polynomial_v(x, n):
    """torch.special.chebyshev_polynomial_v: V_n(x), V_1 = 2x - 1, same recurrence as T; no MindSpore op."""
    return _polynomial(x, n, lambda x: x + x - 1.0, lambda x, q, p, k: (x + x) * q - p)


def chebyshev_polynomial_w(x, n):
    """torch.special.chebyshev_polynomial_w: W_n(x), W_1 = 2x + 1, same recurrence as T; no MindSpore op."""
    return _polynomial(x, n, lambda x: x + x + 1.0, lambda x, q, p, k: (x + x) * q - p)


def shifted_chebyshev_polynomial_t(x, n):
    """torch.special.shifted_chebyshev_polynomial_t: T_n(2x - 1); no MindSpore op."""
    return chebyshev_polynomial_t(x + x - 1.0, n)


def shifted_chebyshev_polynomial_u(x, n):
    """torch.special.shifted_chebyshev_polynomial_u: U_n(2x - 1); no MindSpore op."""
    return chebyshev_polynomial_u(x + x - 1.0, n)


def shifted_chebyshev_polynomial_v(x, n):
    """torch.special.shifted_chebyshev_polynomial_v: V_n(2x - 1); no MindSpore op."""
    return chebyshev_polynomial_v(x + x - 1.0, n)


def shifted_chebyshev_polynomial_w(x, n):
    """torch.special.shifted_chebyshev_polynomial_w: W_n(2x - 1); no MindSpore op."""
    return chebyshev_polynomial_w(x + x - 1.0, n)


def hermite_polynomial_h(x, n):
    """torch.special.hermite_polynomial_h: physicists' H_n(x), H_{k+1} = 2x H_k - 2k H_{k-1}; no MindSpore op."""
    return _polynomial(x, n, lambda x: x + x, lambda x, q, p, k: (x + x) * q - (2.0 * k) * p)


def hermite_polynomial_he(x, n):
    """torch.special.hermite_polynomial_he: probabilists' He_n(x), He_{k+1} = x He_k - k He_{k-1}; no MindSpore op."""
    return _polynomial(x, n, lambda x: x, lambda x, q, p, k: x * q - float(k) * p)


def laguerre_polynomial_l(x, n):
    """torch.special.laguerre_polynomial_l: L_n(x), L_{k+1} = ((2k+1-x) L_k - k L_{k-1}) / (k+1); no MindSpore op."""
    return _polynomial(x, n, lambda x: 1.0 - x,
                       lambda x, q, p, k: ((2.0 * k + 1.0 - x) * q - float(k) * p) / (k + 1.0))


def legendre_polynomial_p(x, n):
    """torch.special.legendre_polynomial_p: P_n(x), P_{k+1} = ((2k+1) x P_k - k P_{k-1}) / (k+1); no MindSpore op."""
    return _polynomial(x, n, lambda x: x,
                       lambda x, q, p, k: ((2.0 * k + 1.0) * x * q - float(k) * p) / (k + 1.0))


# ---------------------------------------------------------------------------------------------- torch.fft
# MindSpore 2.10's hfft/hfft2/hfftn (complex input) and ihfft/ihfft2/ihfftn return the complex conjugate on every
# second call on CPU (measured max abs diff 14 for hfft, 1.1 for ihfft on alternate calls of the same op). They are
# built here from irfft*/rfft*, which are stable, using torch's own identities: hfft(x, norm) = irfft(conj(x),
# swapped norm) and ihfft(x, norm) = conj(rfft(x, swapped norm)), "backward" <-> "forward", "ortho" unchanged.

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(input, n=None, dim=-1, norm=None):
    """torch.fft.hfft, see the note above."""
    return ops.irfft(ops.conj(input), n=n, dim=dim, norm=_SWAP[norm])


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.hfft2, see the note above."""
    return ops.irfft2(ops.conj(input), s=s, dim=dim, norm=_SWAP[norm])


def hfftn(input, s=None, dim=None, norm=None):
    """torch.fft.hfftn, see the note above."""
    return ops.irfftn(ops.conj(input), s=s, dim=dim, norm=_SWAP[norm])


def ihfft(input, n=None, dim=-1, norm=None):
    """torch.fft.ihfft, see the note above."""
    return ops.conj(ops.rfft(input, n=n, dim=dim, norm=_SWAP[norm]))


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """torch.fft.ihfft2, see the note above."""
    return ops.conj(ops.rfft2(input, s=s, dim=dim, norm=_SWAP[norm]))


def ihfftn(input, s=None, dim=None, norm=None):
    """torch.fft.ihfftn, see the note above."""
    return ops.conj(ops.rfftn(input, s=s, dim=dim, norm=_SWAP[norm]))


# torch <= 1.7's rfft/irfft (removed in torch 1.8): complex values as a trailing axis of size 2 (real, imag), the
# transform over the last signal_ndim axes; the torch side of a proof gets them back from
# mindport.discovery.legacy_torch, which says what they computed.

def _legacy_fft_dims(signal_ndim):
    if signal_ndim not in (1, 2, 3):
        raise ValueError(f"Expected signal_ndim to be 1, 2, or 3, but got signal_ndim={signal_ndim}")
    return tuple(range(-signal_ndim, 0))


def legacy_rfft(input, signal_ndim, normalized=False, onesided=True):
    """torch.rfft (torch <= 1.7): rfftn (onesided) or fftn of the real input over the last ``signal_ndim`` axes,
    norm "ortho" when ``normalized``, as a real tensor with a trailing (real, imag) axis."""
    dims = _legacy_fft_dims(signal_ndim)
    norm = "ortho" if normalized else "backward"
    out = ops.rfftn(input, dim=dims, norm=norm) if onesided else ops.fftn(input, dim=dims, norm=norm)
    return ops.view_as_real(out)


def legacy_irfft(input, signal_ndim, normalized=False, onesided=True, signal_sizes=None):
    """torch.irfft (torch <= 1.7): irfftn over the last ``signal_ndim`` axes of the complex tensor the trailing
    (real, imag) axis holds, ``s=signal_sizes``, norm "ortho" when ``normalized``. ``onesided=False``: the full
    spectrum, of which the last signal axis' first N//2+1 bins are inverted (N its length unless ``signal_sizes``)."""
    dims = _legacy_fft_dims(signal_ndim)
    norm = "ortho" if normalized else "backward"
    spectrum = _COMPLEX(input[..., 0], input[..., 1])
    sizes = None if signal_sizes is None else tuple(int(n) for n in signal_sizes)
    if not onesided:
        if sizes is None:
            sizes = tuple(spectrum.shape[len(spectrum.shape) - signal_ndim:])
        spectrum = spectrum[..., : spectrum.shape[-1] // 2 + 1]
    return ops.irfftn(spectrum, s=sizes, dim=dims, norm=norm)


_COMPLEX = ops.Complex()


# Integer and bool inputs compute in float32, as torch promotes them (the functions above assume a float input).
for _name in ("erfcx", "ndtri", "log_ndtr", "ndtr", "entr", "spherical_bessel_j0", "log1p", "expm1",
              "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
              "shifted_chebyshev_polynomial_w"):
    globals()[_name] = _int_to_float(globals()[_name])
