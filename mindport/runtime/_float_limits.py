"""The limits of the float dtypes that runtime formulas read by a tensor's dtype (torch's ``finfo(x.dtype).eps``,
``.min``, ``.tiny`` inside its own functions): machine epsilon, lowest finite value, smallest normal.

Each is read through a constexpr, a constant in a graph. A static graph (``GRAPH_MODE``, ``@jit``) reads a dict keyed
by dtypes through its JIT Fallback instead: the value then has no known type there, nor has whatever it feeds, and a
later join of dtypes fails to compile (``matrix_rank``'s tolerance under ``lstsq``, Koopa's ``torch.cat`` of
``bmm(x, K)``; ``Bernoulli(probs=p).logits`` in a ``torch.cat``: "IndexError: list index out of range" in
``promoted``). One table for linalg and distributions; complex dtypes take their real part's limits."""
from __future__ import annotations

import mindspore as ms
from mindspore.ops.primitive import constexpr

# dtype -> (eps, lowest, tiny), torch.finfo's values
_LIMITS = {
    ms.float16: (2.0 ** -10, -65504.0, 2.0 ** -14),
    ms.bfloat16: (2.0 ** -7, -3.3895313892515355e38, 2.0 ** -126),
    ms.float32: (2.0 ** -23, -3.4028234663852886e38, 2.0 ** -126),
    ms.float64: (2.0 ** -52, -1.7976931348623157e308, 2.2250738585072014e-308),
}
_LIMITS[ms.complex64] = _LIMITS[ms.float32]
_LIMITS[ms.complex128] = _LIMITS[ms.float64]


@constexpr
def eps(dtype):
    """The machine epsilon of ``dtype`` (torch.finfo(dtype).eps)."""
    return _LIMITS[dtype][0]


@constexpr
def lowest(dtype):
    """The lowest finite value of ``dtype`` (torch.finfo(dtype).min)."""
    return _LIMITS[dtype][1]


@constexpr
def tiny(dtype):
    """The smallest positive normal value of ``dtype`` (torch.finfo(dtype).tiny)."""
    return _LIMITS[dtype][2]
