"""Top-level ``torch.*`` functions that MindSpore 2.10 lacks, computes differently, or only offers without a CPU
kernel, written as small compositions of ``mindspore.ops``/``Tensor`` operations (converted code imports this
module as ``mp_math``). Tensor methods with the same meaning call the same functions, the receiver first
(``x.kthvalue(2)`` -> ``mp_math.kthvalue(x, 2)``).

Each function keeps torch's signature and result (values, shapes and dtypes: int64 indices where torch returns
int64, named tuples where torch returns them, Python bools where torch returns bools). Why MindSpore needs help is
said in each docstring. Not here: ``torch.nn.functional`` and its ``torch.*`` aliases
(:mod:`mindport.runtime.nn_functional`), linear algebra (:mod:`mindport.runtime.linalg`), ``torch.special``
(:mod:`mindport.runtime.special`), Tensor-only methods (:mod:`mindport.runtime.tensor`).

This module defines ``range`` (torch.range): use ``builtins.range`` for Python's.
"""
from __future__ import annotations

import builtins
import math as _pymath
import typing
from collections import namedtuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.common import dtype as mstype

from mindport.runtime._graph import in_graph as _in_graph
from mindport.runtime._graph import named

# torch returns named tuples (torch.return_types.sort etc.): code reads .values / .indices and the like
_SortResult = namedtuple("sort", ["values", "indices"])
_TopkResult = namedtuple("topk", ["values", "indices"])
_CumminResult = namedtuple("cummin", ["values", "indices"])
_KthValue = namedtuple("kthvalue", ["values", "indices"])
_Mode = namedtuple("mode", ["values", "indices"])
_AMinMax = namedtuple("aminmax", ["min", "max"])
_Frexp = namedtuple("frexp", ["mantissa", "exponent"])
_Histogram = namedtuple("histogram", ["hist", "bin_edges"])

_INT64 = ms.int64
_COMPLEX = ops.Complex()


def _tensor(value, dtype=None) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(value, dtype)


def _axis(dim: int, ndim: int) -> int:
    return dim + ndim if dim < 0 else dim


def _axes(dim, ndim: int):
    """torch's dim (None, int or sequence) as a tuple of non-negative axes (None = all axes)."""
    if dim is None:
        return tuple(builtins.range(ndim))
    if isinstance(dim, int):
        return (_axis(dim, ndim),)
    return tuple(_axis(d, ndim) for d in dim)


def _is_float(dtype) -> bool:
    return dtype in mstype.float_type


def _is_complex(dtype) -> bool:
    return dtype in mstype.complex_type


def _long(t):
    return t.astype(_INT64)


def _ordered(input):
    """A bool tensor as uint8 (False < True, as torch orders them): MindSpore 2.10's CPU kernels that order values
    (ReduceMax/Min, ArgMaxWithValue, Sort, Cummax/Cummin, RepeatInterleave) refuse bool. Other dtypes as they are;
    the callers give a bool result back as bool."""
    return input.astype(ms.uint8) if input.dtype == ms.bool_ else input


def _as(values, dtype):
    return values if values.dtype == dtype else values.astype(dtype)


# ---------------------------------------------------------------------------------------------------------------
# Sorting, counting, comparing: int64 indices where MindSpore returns int32 (float32 counts for bincount)


def sort(input, dim=-1, descending=False, stable=False):
    """torch.sort / Tensor.sort: (values, indices) named tuple, int64 indices; ops.sort returns int32 indices.

    ops.sort is stable on CPU, so ``stable=True`` holds; with ``stable=False`` torch leaves ties' order unspecified.
    """
    if input.ndim == 0:  # one element, at index 0: MindSpore's Sort refuses rank 0
        return named(_SortResult, input, ops.zeros((), _INT64))
    values, indices = ops.sort(_ordered(input), axis=dim, descending=descending)
    return named(_SortResult, _as(values, input.dtype), _long(indices))


def argsort(input, dim=-1, descending=False, stable=False):
    """torch.argsort / Tensor.argsort: int64 indices (ops.argsort returns int32); stable like :func:`sort`."""
    if input.ndim == 0:
        return ops.zeros((), _INT64)
    return _long(ops.argsort(_ordered(input), axis=dim, descending=descending))


def topk(input, k, dim=None, largest=True, sorted=True):
    """torch.topk / Tensor.topk: (values, indices) named tuple along ``dim`` (default last), int64 indices;
    ops.topk returns int32 indices."""
    values, indices = ops.topk(input, k, dim=-1 if dim is None else dim, largest=largest, sorted=sorted)
    return named(_TopkResult, values, _long(indices))


def cummin(input, dim):
    """torch.cummin / Tensor.cummin: (values, indices) named tuple, int64 indices; ops.cummin returns int32 indices."""
    if input.ndim == 0:  # one element, at index 0: MindSpore's Cummin refuses rank 0
        return named(_CumminResult, input, ops.zeros((), _INT64))
    values, indices = ops.cummin(_ordered(input), dim)
    return named(_CumminResult, _as(values, input.dtype), _long(indices))


def argmin(input, dim=None, keepdim=False):
    """Tensor.argmin / torch.argmin: int64 indices; ops.argmin returns int32."""
    return _keep_all_dims(_long(ops.argmin(input, dim, keepdim)), input, dim, keepdim)


def argmax(input, dim=None, keepdim=False):
    """torch.argmax / Tensor.argmax: with dim=None and keepdim=True torch keeps every dimension as 1 (shape (1, 1) for
    a matrix); ops.argmax returns a 0-d index there."""
    return _keep_all_dims(ops.argmax(input, dim, keepdim), input, dim, keepdim)


def _keep_all_dims(result, input, dim, keepdim):
    if dim is None and keepdim and result.shape != (1,) * input.ndim:
        return result.reshape((1,) * input.ndim)
    return result


def count_nonzero(input, dim=None):
    """torch.count_nonzero / Tensor.count_nonzero: int64 counts over ``dim`` (int, tuple or None = all). ops.count_nonzero
    refuses bool tensors (a mask is the usual input): they are counted as int8. 0 over an empty extent (MindSpore's
    count is uninitialised memory there)."""
    if input.dtype == ms.bool_:
        input = input.astype(ms.int8)
    return _or_empty(ops.count_nonzero(input, axis=() if dim is None else dim, dtype=_INT64), input, dim, False, 0)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """torch.multinomial / Tensor.multinomial: int64 samples (ops.multinomial returns int32 and defaults to
    replacement=True where torch defaults to False). With ``generator=`` (a torch.Generator, converted to
    mindspore.Generator): each row's categories drawn with probability weight / sum from that generator's own stream
    (without replacement: distinct categories, as torch)."""
    if generator is None:
        return _long(ops.multinomial(input, num_samples, replacement))
    weights = input.asnumpy().astype(np.float64)
    rows = weights.reshape(-1, weights.shape[-1])
    stream = _generator_stream(generator, rows.shape[0] * int(num_samples))
    out = np.stack([stream.choice(rows.shape[1], int(num_samples), replace=bool(replacement), p=row / row.sum())
                    for row in rows])
    return Tensor(out.reshape(weights.shape[:-1] + (int(num_samples),)), _INT64)


def bincount(input, weights=None, minlength=0):
    """torch.bincount / Tensor.bincount: int64 counts without weights, float32 for float32 weights, else float64.

    ops.bincount always returns float32 (accumulating float64 weights in float32), so float64 weights are summed
    here with a scatter-add in float64. An empty input gives ``minlength`` int64 zeros, with or without weights, as
    torch (ops.bincount gives none).
    """
    if _empty_extent(input.shape, None):
        return ops.zeros((minlength,), _INT64)
    if weights is None:
        return _long(ops.bincount(input, None, minlength))
    if weights.dtype == ms.float32:
        return ops.bincount(input, weights, minlength)
    dtype = ms.float64  # torch: float32 weights give float32 counts, any other dtype float64 (float16 included)
    size = max(int(input.max()) + 1 if input.size else 0, minlength)
    zeros = ops.zeros((size,), dtype)
    return ops.tensor_scatter_add(zeros, input.reshape(-1, 1).astype(ms.int64), weights.astype(dtype))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique / Tensor.unique (dim=None): sorted unique values of the flattened input, optionally with the
    inverse indices (input's shape, int64) and counts (int64). Tensor.unique has no CPU kernel (Unique2) in 2.10 and
    ops.unique always returns a pair and has no counts; this sorts the values (a stable sort) and keeps the first of
    each run (ops.unique_consecutive).
    ``sorted=False`` leaves the order unspecified in torch (its CPU kernel sorts anyway): sorted here too.
    """
    if dim is not None:
        raise NotImplementedError("mindport.runtime.math.unique: dim= is not supported")
    flat = input.reshape(-1)
    values, order = ops.sort(flat)
    out, inverse_sorted, counts = ops.unique_consecutive(values, return_inverse=True, return_counts=True)
    results = [out]
    if return_inverse:
        inverse = ops.gather(inverse_sorted, ops.argsort(order), 0)  # back from sorted positions to input positions
        results.append(_long(inverse).reshape(input.shape))
    if return_counts:
        results.append(_long(counts))
    return results[0] if len(results) == 1 else tuple(results)


def equal(input, other):
    """torch.equal / Tensor.equal: one Python bool (same shape and same values); ops.equal and Tensor.equal are
    elementwise."""
    return tuple(input.shape) == tuple(other.shape) and bool((input == other).all())


# ---------------------------------------------------------------------------------------------------------------
# Reductions and statistics

# --- reductions over an empty extent -----------------------------------------------------------------------------
# MindSpore 2.10's CPU reduction kernels do not write their output when the reduced extent has no elements: ops.sum
# of a (0,) or (2, 0) tensor returns uninitialised memory (9.2e13, 3.6e-25, an int64 sum 9.4e13), ops.mean inf or
# -inf, ops.prod over dim 0 of a (0, 3) tensor [1, nan, inf], ops.any True, ops.amax garbage (torch raises); the
# Tensor methods and mint share the kernels (measured on 2.10; tests/mappings/test_empty_reductions.py). torch
# gives the reduction's identity: sum 0, prod 1, any False, all True, mean/var/std nan, count_nonzero 0.
# The functions below run the MindSpore reduction and, when the reduced extent is empty, return torch's answer in
# torch's shape and the reduction's dtype instead. The check reads the static shape only: a constant in a graph, a
# few Python comparisons in PyNative.


def _reduced_axes(ndim: int, dim) -> tuple:
    """torch's ``dim`` (None, () or [] = every axis, an int, a sequence) as non-negative axes."""
    if dim is None:
        return tuple(builtins.range(ndim))
    if isinstance(dim, int):
        return (_axis(dim, ndim),)
    if len(dim) == 0:
        return tuple(builtins.range(ndim))
    return tuple(_axis(d, ndim) for d in dim)


def _empty_extent(shape, dim) -> bool:
    """True when a reduction of a tensor of ``shape`` over ``dim`` has no element to reduce."""
    if len(shape) == 0:
        return False
    for axis in _reduced_axes(len(shape), dim):
        if shape[axis] == 0:
            return True
    return False


def _reduced_shape(shape, dim, keepdim) -> tuple:
    """torch's output shape of a reduction over ``dim``: the reduced axes removed, or kept as 1 with keepdim."""
    axes = _reduced_axes(len(shape), dim)
    out = []
    for axis, size in enumerate(shape):
        if axis not in axes:
            out.append(size)
        elif keepdim:
            out.append(1)
    return tuple(out)


def _or_empty(result, input, dim, keepdim, value):
    """``result`` (a reduction of ``input`` over ``dim``), or ``value`` in torch's output shape and ``result``'s
    dtype when the reduced extent is empty (MindSpore's kernel then returns uninitialised memory)."""
    if _empty_extent(input.shape, dim):
        return ops.full(_reduced_shape(input.shape, dim, keepdim), value, dtype=result.dtype)
    return result


def _nonempty_extent(name, input, dim):
    """torch refuses max-like reductions over an empty extent (IndexError); MindSpore returns uninitialised memory."""
    if _empty_extent(input.shape, dim):
        raise IndexError(f"{name}(): Expected reduction dim to have non-zero size.")


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - torch's name
    """torch.sum / Tensor.sum: ops.sum, 0 over an empty extent (MindSpore returns uninitialised memory). ``x.sum(1)``
    on a receiver the converter could not type (a function's parameter) may be a NumPy array or a SciPy sparse
    matrix at run time: that object's own ``sum`` answers, as it did in the torch script."""
    if not isinstance(input, ms.Tensor) and not isinstance(input, (int, float, bool)) and hasattr(input, "sum"):
        if keepdim or dtype is not None:
            return input.sum(axis=dim, keepdims=keepdim, dtype=dtype)
        return input.sum(dim)
    return _or_empty(ops.sum(input, dim, keepdim, dtype=dtype), input, dim, keepdim, 0)


def _own_method(input, name) -> bool:
    """``x.mean(0)`` on a receiver the converter could not type (a function's parameter) may be a NumPy array (or a
    pandas object) at run time: that object's own method answers, as it did in the torch script (``sum`` below; the
    fresh15 recipe's ``(X - X.mean(0)) / X.std(0)`` on make_moons' array failed in ReduceMean)."""
    return not isinstance(input, (ms.Tensor, int, float, bool)) and hasattr(input, name)


def _own_reduction(input, name, dim, keepdim, dtype=None):
    """``input.<name>(dim)`` answered by a NumPy receiver's own method, numpy's keywords for torch's."""
    if keepdim or dtype is not None:
        return getattr(input, name)(axis=dim, keepdims=keepdim, **({} if dtype is None else {"dtype": dtype}))
    return getattr(input, name)(dim)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.mean / Tensor.mean: ops.mean (in ``dtype`` when given), NaN over an empty extent (MindSpore gives
    inf/-inf). A NumPy receiver: its own ``mean`` (``_own_method``)."""
    if _own_method(input, "mean"):
        if keepdim or dtype is not None:
            return input.mean(axis=dim, keepdims=keepdim, dtype=dtype)
        return input.mean(dim)
    if dtype is not None:
        input = input.astype(dtype)
    return _or_empty(ops.mean(input, dim, keepdim), input, dim, keepdim, float("nan"))


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """torch.prod / Tensor.prod: ops.prod, 1 over an empty extent (MindSpore gives 1, nan, inf ... over dim 0 of a
    (0, 3) tensor). A NumPy receiver: its own ``prod`` (``_own_method``)."""
    if _own_method(input, "prod"):
        return _own_reduction(input, "prod", dim, keepdim, dtype)
    return _or_empty(ops.prod(input, dim, keepdim, dtype), input, dim, keepdim, 1)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nanmean / Tensor.nanmean: ops.nanmean, NaN over an empty extent (MindSpore gives inf)."""
    return _or_empty(ops.nanmean(input, dim, keepdim, dtype=dtype), input, dim, keepdim, float("nan"))


def amax(input, dim=(), keepdim=False):
    """torch.amax / Tensor.amax: ops.amax; an empty extent raises IndexError as in torch (MindSpore returns
    uninitialised memory)."""
    _nonempty_extent("amax", input, dim)
    return _as(ops.amax(_ordered(input), _reduced_axes(input.ndim, dim), keepdim), input.dtype)


def amin(input, dim=(), keepdim=False):
    """torch.amin / Tensor.amin: as :func:`amax`, the smallest values."""
    _nonempty_extent("amin", input, dim)
    return _as(ops.amin(_ordered(input), _reduced_axes(input.ndim, dim), keepdim), input.dtype)


def _dim_tuple(dim):
    """torch's reductions take a list of dims (normflows' ActNorm: ``z.std(self.batch_dims, ...)`` of a list attribute);
    ops.var/std_mean/var_mean refuse one in a static graph ("Each axis should be integer, but got <class 'list'>"):
    the same dims as a tuple."""
    return tuple(dim) if isinstance(dim, list) else dim


def _var(input, dim, correction, keepdim):
    """ops.var; a complex tensor's variance is real, that of its real part plus that of its imaginary part (ops.var
    returns a complex number), and a 0-d tensor is one sample (ops.var gives 0 where torch's 0/0 is NaN)."""
    dim = _dim_tuple(dim)
    if input.ndim == 0:  # one sample: torch divides 0 by max(0, 1 - correction)
        return ops.full((), 0.0 if correction == 0 else float("nan"), dtype=real_abs(input).dtype)
    if _is_complex(input.dtype):
        return ops.var(ops.real(input), dim, correction, keepdim) + ops.var(ops.imag(input), dim, correction, keepdim)
    return ops.var(input, dim, correction, keepdim)


def std(input, dim=None, correction=1, keepdim=False):
    """torch.std / Tensor.std (the converter writes ``correction``, from torch's ``unbiased`` flag too): the square
    root of :func:`_var` (real for a complex tensor), NaN over an empty extent in torch's shape (Tensor.std returns a
    0-d tensor there). A NumPy receiver: its own ``std`` (``_own_method``), numpy's ``ddof=0`` unless the script
    asked torch's way for another correction (the converter writes torch's default, 1, which a NumPy call never
    had)."""
    if _own_method(input, "std"):
        return _numpy_spread(input, "std", dim, correction, keepdim)
    return _or_empty(ops.sqrt(_var(input, dim, correction, keepdim)), input, dim, keepdim, float("nan"))


def var(input, dim=None, correction=1, keepdim=False):
    """torch.var / Tensor.var: :func:`_var`, NaN over an empty extent in torch's shape (as :func:`std`). A NumPy
    receiver: its own ``var`` (as :func:`std`)."""
    if _own_method(input, "var"):
        return _numpy_spread(input, "var", dim, correction, keepdim)
    return _or_empty(_var(input, dim, correction, keepdim), input, dim, keepdim, float("nan"))


def _numpy_spread(input, name, dim, correction, keepdim):
    ddof = 0 if correction == 1 else correction  # 1 is the converter's spelling of torch's default
    if keepdim or ddof:
        return getattr(input, name)(axis=dim, ddof=ddof, keepdims=keepdim)
    return getattr(input, name)(dim)


def std_mean(input, dim=None, correction=1, keepdim=False):
    """torch.std_mean: (std, mean) from ops.std_mean, both NaN over an empty extent (MindSpore's mean is inf).
    Complex input (ReduceStd has no complex kernel): the real std and the complex mean."""
    if _is_complex(input.dtype):
        return std(input, dim, correction, keepdim), mean(input, dim, keepdim)
    s, m = ops.std_mean(input, _dim_tuple(dim), correction, keepdim)
    nan = float("nan")
    return _or_empty(s, input, dim, keepdim, nan), _or_empty(m, input, dim, keepdim, nan)


def var_mean(input, dim=None, correction=1, keepdim=False):
    """torch.var_mean: (var, mean) from ops.var_mean, both NaN over an empty extent. Complex input (ReduceStd has no
    complex kernel): the real variance and the complex mean."""
    if _is_complex(input.dtype):
        return var(input, dim, correction, keepdim), mean(input, dim, keepdim)
    v, m = ops.var_mean(input, _dim_tuple(dim), correction, keepdim)
    nan = float("nan")
    return _or_empty(v, input, dim, keepdim, nan), _or_empty(m, input, dim, keepdim, nan)


# --- other reductions and statistics -----------------------------------------------------------------------------


def aminmax(input, *, dim=None, keepdim=False):
    """torch.aminmax / Tensor.aminmax: (min, max) named tuple; ``ops.aminmax`` reduces axis 0 by default where torch
    (dim=None) reduces all elements."""
    axis = tuple(builtins.range(input.ndim)) if dim is None else dim
    x = _ordered(input)
    return named(_AMinMax, _as(ops.amin(x, axis, keepdim), input.dtype), _as(ops.amax(x, axis, keepdim), input.dtype))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """torch.allclose returns a Python bool; MindSpore only has the elementwise ``ops.isclose``."""
    return bool(ops.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan).all())


def kthvalue(input, k, dim=-1, keepdim=False):
    """torch.kthvalue / Tensor.kthvalue: the k-th smallest values and their int64 indices (named tuple).
    ``mint.kthvalue`` and ``Tensor.kthvalue`` fail on CPU in 2.10; built from a sort (NaN sorted last, as torch).
    Which index is reported for tied values is unspecified in torch."""
    dim = -1 if dim is None else dim
    if _is_float(input.dtype):  # MindSpore 2.10's sort leaves NaN in place; torch orders NaN last
        _, indices = ops.sort(ops.masked_fill(input, ops.isnan(input), float("inf")), axis=dim)
    else:
        _, indices = ops.sort(input, axis=dim)
    indices = ops.narrow(indices, dim, k - 1, 1).astype(ms.int64)
    values = ops.gather_elements(input, dim, indices)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return named(_KthValue, values, indices)


def mode(input, dim=-1, keepdim=False):
    """torch.mode / Tensor.mode: the most frequent value along ``dim`` (the smallest among ties) and the int64 index
    of its last occurrence (torch's CPU result), as a named tuple. MindSpore has no mode; counts come from an
    (n, n) equality table along ``dim``. A receiver that is not a tensor is asked itself: ``dist.mode()`` on a
    torch.distributions subclass that defines ``mode`` as a method (Dreamer's OneHotDist), whose receiver the
    converter can't tell from a tensor."""
    if not isinstance(input, Tensor):
        return input.mode()
    dim = _axis(dim, input.ndim)
    x = ops.moveaxis(input, dim, -1)
    counts = (x.expand_dims(-1) == x.expand_dims(-2)).astype(ms.int32).sum(-1)
    best = counts == ops.amax(counts, axis=-1, keepdims=True)
    fill = ops.amax(x, axis=-1, keepdims=True).broadcast_to(x.shape)
    values = ops.amin(ops.where(best, x, fill), axis=-1, keepdims=True)
    positions = ops.arange(x.shape[-1], dtype=ms.int64).broadcast_to(x.shape)
    indices = ops.amax(ops.where(x == values, positions, ops.full_like(positions, -1)), axis=-1, keepdims=True)
    values, indices = ops.moveaxis(values, -1, dim), ops.moveaxis(indices, -1, dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return named(_Mode, values, indices)


_FLOATS = (ms.float16, ms.float32, ms.float64, ms.bfloat16)


def signbit(input):
    """torch.signbit / Tensor.signbit: True where the sign bit is set, -0.0 included (``ops.signbit`` says False for
    -0.0 in 2.10); 1 / -0.0 is -inf, which tells the two zeros apart."""
    if input.dtype in _FLOATS:
        return (input < 0) | ((input == 0) & ((1 / input) < 0))
    return ops.signbit(input)


def copysign(input, other):
    """torch.copysign / Tensor.copysign: |input| with the sign of ``other``, -0.0 counted as negative (``ops.copysign``
    takes -0.0 as positive in 2.10)."""
    out = ops.copysign(input, other)
    if isinstance(other, Tensor) and other.dtype in _FLOATS:
        size = ops.abs(out)
        return ops.where(signbit(other), -size, size)
    if isinstance(other, float) and other == 0 and _pymath.copysign(1.0, other) < 0:
        return -ops.abs(out)
    return out


def cartesian_prod(*tensors):
    """torch.cartesian_prod: of one tensor, that tensor (1-D); ``ops.cartesian_prod`` gives it a column shape."""
    if len(tensors) == 1:
        return tensors[0]
    return ops.cartesian_prod(*tensors)


def median(input, dim=None, keepdim=False):
    """torch.median / Tensor.median: without ``dim`` torch returns one value (the lower median of all elements), with
    ``dim`` a (values, int64 indices) pair; ``ops.median`` always reduces one axis (the last by default) and returns a
    pair."""
    if dim is None:
        return ops.median(input.reshape(-1), 0)[0]
    return ops.median(input, dim, keepdim)


def nanmedian(input, dim=None, keepdim=False):
    """torch.nanmedian: without ``dim`` torch returns one value (the lower median of the non-NaN elements), with
    ``dim`` a (values, int64 indices) pair; ``ops.nanmedian`` always reduces one axis and returns a pair."""
    if dim is None:
        return ops.nanmedian(input.reshape(-1), 0)[0]
    return ops.nanmedian(input, dim, keepdim)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(f"quantile: unknown interpolation {interpolation!r}")
    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    qt = (Tensor([q], input.dtype) if scalar_q else q.astype(input.dtype)).reshape(-1)
    x = input.reshape(-1) if dim is None else ops.moveaxis(input, dim, -1)
    nan = ops.isnan(x)
    # MindSpore's CPU sort does not order NaN last: sort with +inf in their place and count the valid values.
    s = ops.sort(ops.masked_fill(x, nan, float("inf")), axis=-1)[0]
    if ignore_nan:
        count = (~nan).astype(input.dtype).sum(-1, keepdims=True)
    else:
        count = ops.full(x.shape[:-1] + (1,), x.shape[-1], dtype=input.dtype)
    pos = qt * ops.clamp(count - 1, min=0)  # (..., Q)
    lo, hi = ops.floor(pos), ops.ceil(pos)
    if interpolation == "lower":
        pos = hi = lo
    elif interpolation == "higher":
        pos = lo = hi
    elif interpolation == "nearest":
        pos = lo = hi = ops.round(pos)  # round half to even, as torch
    lo_v = ops.gather_elements(s, s.ndim - 1, lo.astype(ms.int64))
    hi_v = ops.gather_elements(s, s.ndim - 1, hi.astype(ms.int64))
    if interpolation == "midpoint":
        out = lo_v + (hi_v - lo_v) * 0.5
    else:
        weight = pos - lo
        out = ops.where(weight < 0.5, lo_v + weight * (hi_v - lo_v), hi_v - (hi_v - lo_v) * (1 - weight))
    invalid = (count == 0) if ignore_nan else ops.any(nan, -1, True)
    out = ops.masked_fill(out, ops.broadcast_to(invalid, out.shape), float("nan"))
    out = ops.moveaxis(out, -1, 0)  # (Q, ...)
    if keepdim:
        if dim is None:
            out = out.reshape((out.shape[0],) + (1,) * input.ndim)
        else:
            out = out.expand_dims(_axis(dim, input.ndim) + 1)
    return out[0] if scalar_q else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """torch.quantile / Tensor.quantile: ``ops.quantile`` has no CPU kernel in 2.10 and no ``interpolation``; sort
    and interpolate. NaN anywhere in a reduced slice gives NaN, as in torch."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """torch.nanquantile / Tensor.nanquantile: ``ops.nanquantile`` has no CPU kernel in 2.10; sort and interpolate
    the non-NaN values (a slice of NaN only gives NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


def corrcoef(input):
    """torch.corrcoef (Pearson coefficients, clipped to [-1, 1]): MindSpore has ``ops.cov`` but no corrcoef."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = ops.sqrt(ops.diagonal(c))
    c = c / d.expand_dims(1) / d.expand_dims(0)
    return ops.clamp(c, -1.0, 1.0)


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002 - torch's argument name
    """torch.histogram / Tensor.histogram: (hist, bin_edges) named tuple, ``bins`` a count or a 1-D tensor of edges.
    MindSpore's ``ops.histc`` has neither weights, density nor the edges. A count gets torch's edges (its linspace
    formula, in the input's dtype); each value goes to the bin its edges say (the last bin including its right edge,
    values outside ignored), counted with a scatter-add."""
    flat = input.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins.astype(input.dtype)
    else:
        if range is None:
            lo, hi = float(flat.min()), float(flat.max())
        else:
            lo, hi = float(range[0]), float(range[1])
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # torch widens an empty range the same way
        lo, hi = Tensor(lo, input.dtype), Tensor(hi, input.dtype)
        n = int(bins)
        i = ops.arange(n + 1, dtype=input.dtype)
        step = (hi - lo) / n  # torch's linspace: from the start for the first half, from the end for the rest
        edges = ops.where(i < (n + 1) // 2, lo + step * i, hi - step * (n - i))
    count = edges.shape[0] - 1
    index = _bin_index(flat, edges)
    index = ops.where(flat == edges[-1], ops.full_like(index, count - 1), index)
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    weights = ops.ones_like(flat) if weight is None else weight.reshape(-1).astype(input.dtype)
    weights = ops.where(inside, weights, ops.zeros_like(weights))
    index = ops.where(inside, index, ops.zeros_like(index))
    hist = ops.tensor_scatter_add(ops.zeros((count,), input.dtype), index.reshape(-1, 1), weights)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return named(_Histogram, hist, edges)


def _bin_index(flat, edges):
    """For each value, the number of edges <= it, minus one (searchsorted(edges, flat, right=True) - 1), by
    comparison in chunks: MindSpore 2.10's CPU SearchSorted kernel called this way breaks later ops.bucketize calls
    in the same process ("the dimension of `v` and output must be equal", measured)."""
    chunk = max(1, (1 << 22) // edges.shape[0])
    parts = [(flat[start:start + chunk].expand_dims(1) >= edges.expand_dims(0)).astype(ms.int32).sum(1) - 1
             for start in builtins.range(0, flat.shape[0], chunk)]
    if not parts:
        return ops.zeros((0,), ms.int32)
    return parts[0] if len(parts) == 1 else ops.cat(parts)


def _vector_norm(x, p, dim, keepdim):
    axis = tuple(builtins.range(x.ndim)) if dim is None else dim
    a = ops.abs(x)
    if p == float("inf") or p == float("-inf"):
        _nonempty_extent("norm", a, axis)
        return ops.amax(a, axis, keepdim) if p > 0 else ops.amin(a, axis, keepdim)
    if p == 0:
        return sum((a != 0).astype(a.dtype), axis, keepdim)
    if p == 1:
        return sum(a, axis, keepdim)
    if p == 2:
        return ops.sqrt(sum(a * a, axis, keepdim))
    return ops.pow(sum(ops.pow(a, p), axis, keepdim), 1.0 / p)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The deprecated torch.norm (p: 'fro', 'nuc' or a number; numbers are vector norms over ``dim``, all elements
    when dim is None): ``ops.norm`` follows torch.linalg.norm (matrix norms for 2-D input) instead."""
    if out is not None:
        raise TypeError("norm: out= is not supported, assign the result")
    x = input if dtype is None else input.astype(dtype)
    if p != "nuc":
        x = real_abs(x)  # element norms of a complex tensor are those of its moduli (and real)
    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        axis = (-2, -1) if dim is None else tuple(dim)
        if _is_complex(x.dtype) or x.dtype == ms.float64:
            return _singular_norm(x, "nuc", axis, keepdim)
        return ops.matrix_norm(x, "nuc", axis, keepdim)
    if isinstance(p, str) and p != "fro":
        raise ValueError(f"norm: unknown p {p!r}")
    return _keep_all_dims(_vector_norm(x, 2 if p in ("fro", None) else p, dim, keepdim), input, dim, keepdim)


# torch's norms of complex tensors are real (float32 for complex64), and its singular-value norms keep float64.
# MindSpore 2.10's ops.vector_norm, ops.matrix_norm and ops.norm return complex64 for a complex input (the values
# right, the dtype not), and ops.matrix_norm's ord 2, -2 and 'nuc' drop the imaginary part (off by 3 on a 3x4
# complex matrix) and compute float64 input in float32. ops.svd is right for both (measured against torch). The
# torch.linalg norms built on these are in mindport.runtime.linalg.

def _singular_norm(A, ord, axis, keepdims):
    """ord 2 / -2 / 'nuc' from the singular values of the matrices over ``axis`` (any float or complex dtype)."""
    rows, cols = axis[0] % A.ndim, axis[1] % A.ndim
    rest = [d for d in builtins.range(A.ndim) if d not in (rows, cols)]
    s = ops.svd(ops.transpose(A, tuple(rest) + (rows, cols)), compute_uv=False)
    s = ops.real(s) if _is_complex(s.dtype) else s
    out = s.sum(-1) if ord == "nuc" else ops.amax(s, -1) if ord == 2 else ops.amin(s, -1)
    if keepdims:
        for d in sorted((rows, cols)):
            out = out.expand_dims(d)
    return out


def cond(A, p=None):
    """torch.linalg.cond: for p None / 2 / -2 the ratio of the largest and smallest singular values (ops.svd keeps
    float64 and complex input right; ops.cond computes float64 in float32 and drops the imaginary part); other p
    through ops.cond."""
    if p in (None, 2, -2):
        s = ops.svd(A, compute_uv=False)
        s = ops.real(s) if _is_complex(s.dtype) else s
        high, low = ops.amax(s, -1), ops.amin(s, -1)
        return low / high if p == -2 else high / low
    return ops.cond(A, p)


def frobenius_norm(input, dim=(-2, -1), keepdim=False):
    """torch.frobenius_norm: the 2-norm of the elements over ``dim``; MindSpore has no function of that name."""
    return _vector_norm(real_abs(input), 2, (dim,) if isinstance(dim, int) else tuple(dim), keepdim)


def dot(input, other):
    """torch.dot / Tensor.dot: the dot product of two 1-D tensors. MindSpore's Tensor.dot is the deprecated ops.dot
    (2-D and up only) and mint.dot has no CPU kernel in 2.10 ('The kernel Dot unregistered'). A NumPy array or SciPy
    matrix receiver (``adj.dot(d)`` of a function's parameter, ``_own_method``): its own ``dot``, a matrix product."""
    if _own_method(input, "dot"):
        return input.dot(other)
    product = input * other
    return sum(product).astype(product.dtype)  # an int32 sum is int64 in MindSpore; torch keeps int32


def vdot(input, other):
    """torch.vdot (conj(input) . other of 1-D tensors): ``mint.vdot`` raises 'Not implement exception' on CPU."""
    if _is_complex(input.dtype):
        input = ops.conj(input)
    product = input * other
    return sum(product).astype(product.dtype)


# ---------------------------------------------------------------------------------------------------------------
# Elementwise


def fmin(input, other):
    """torch.fmin (minimum that ignores NaN): ``ops.fmin`` has no CPU kernel in 2.10 (Unsupported op [Fmin])."""
    out = ops.minimum(input, other)
    if _is_float(out.dtype):
        input, other = ops.broadcast_to(input, out.shape), ops.broadcast_to(other, out.shape)
        out = ops.where(ops.isnan(input), other.astype(out.dtype), out)
        out = ops.where(ops.isnan(other), input.astype(out.dtype), out)
    return out


def angle(input):
    """Tensor.angle / torch.angle: real inputs give pi where negative, 0 elsewhere, NaN kept (float32 for integers);
    the 2.10 CPU Angle kernel accepts only complex inputs."""
    if input.dtype in (ms.complex64, ms.complex128):
        return ops.angle(input)
    x = input if ops.is_floating_point(input) else input.astype(ms.float32)
    out = ops.where(x < 0, ops.full_like(x, _pymath.pi), ops.zeros_like(x))
    return ops.where(ops.isnan(x), x, out)


def narrow(input, dim, start, length):
    """torch.narrow / Tensor.narrow / narrow_copy: ``start`` may be a 0-d tensor or negative (counted from the end),
    which ops.narrow refuses ("The input value must be 'int'", "must be in range of [0, n)")."""
    if isinstance(start, ms.Tensor):
        start = int(start)
    if start < 0:
        start += input.shape[dim]
    return ops.narrow(input, dim, start, length)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """torch.diff / Tensor.diff: ``prepend``/``append`` joined along ``dim``, then the first difference taken ``n``
    times (ops.diff takes n=1 only: "'n' must be 1, but got 2")."""
    parts = [part for part in (prepend, input, append) if part is not None]
    x = ops.cat(parts, dim) if len(parts) > 1 else input
    for _ in builtins.range(n):  # (this module defines torch.range)
        x = ops.diff(x, 1, dim)
    return x


def bitwise_not(input):
    """torch.bitwise_not / Tensor.bitwise_not: MindSpore 2.10 has no CPU BitwiseNot kernel; logical_not for bool,
    ops.invert (bit inversion) for integers."""
    if input.dtype == ms.bool_:
        return ops.logical_not(input)
    return ops.invert(input)


_NORMAL = {ms.float16: (-14, 11), ms.bfloat16: (-126, 8), ms.float32: (-126, 24), ms.float64: (-1022, 53)}


@ms.constexpr
def _normal_range(dtype):
    """(smallest normal exponent, mantissa bits) of a float dtype (a constexpr: graph mode can't index a dict by
    dtype)."""
    return _NORMAL[dtype]


def frexp(input):
    """torch.frexp / Tensor.frexp ((mantissa in [0.5, 1), int32 exponent) named tuple): MindSpore has ``ops.ldexp``
    but no frexp. Subnormal inputs are scaled into the normal range first (the CPU log2 flushes them to zero)."""
    min_exp, bits = _normal_range(input.dtype)
    a = ops.abs(input)
    finite = ops.isfinite(input) & (a != 0)
    small = finite & (a < 2.0 ** min_exp)
    x = ops.where(small, input * float(2 ** bits), input)
    safe = ops.where(finite, ops.abs(x), ops.ones_like(a))
    e = (ops.floor(ops.log2(safe)) + 1).astype(ms.int32)
    # two half steps: 2**-e alone overflows for the largest exponents
    half = ops.floor_divide(e, 2)
    m = x * ops.pow(2.0, (-half).astype(input.dtype)) * ops.pow(2.0, (half - e).astype(input.dtype))
    too_big, too_small = ops.abs(m) >= 1, ops.abs(m) < 0.5  # log2 rounding near powers of two
    m = ops.where(finite & too_big, m * 0.5, ops.where(finite & too_small, m * 2, m))
    e = e + (finite & too_big).astype(ms.int32) - (finite & too_small).astype(ms.int32)
    e = e - small.astype(ms.int32) * bits
    return named(_Frexp, ops.where(finite, m, input), ops.where(finite, e, ops.zeros_like(e)))


def rsub(input, other, *, alpha=1):
    """torch.rsub: ``other - alpha * input``; MindSpore has no reversed subtraction."""
    return other - (input if alpha == 1 else input * alpha)


def _same_shape(a, b):
    """``a`` and ``b`` broadcast to one shape: MindSpore's Complex and Polar kernels take only equal shapes, torch
    broadcasts (``torch.polar(torch.tensor(1.0), angles)``, Jimmy-2016/DLModels_Pytorch's flow-matching data: a
    ValueError at first run fresh15)."""
    if tuple(a.shape) == tuple(b.shape):
        return a, b
    return broadcast_tensors(a, b)


def complex(real, imag):
    """torch.complex: MindSpore exposes it only as the primitive ``ops.Complex``, which does not broadcast; torch
    does (``_same_shape``)."""
    return _COMPLEX(*_same_shape(real, imag))


def polar(abs, angle):  # noqa: A002 - torch's names
    """torch.polar: ``ops.polar``, whose kernel does not broadcast; torch does (``_same_shape``)."""
    return ops.polar(*_same_shape(abs, angle))


def _logaddexp_complex(a, b):
    """log(exp(a) + exp(b)) of complex tensors as torch adds them: the term of larger real part ``hi`` plus
    log(1 + exp(lo - hi)), whose imaginary part is not wrapped to (-pi, pi]; two -inf real parts give -inf + 0j."""
    ra, rb = ops.real(a), ops.real(b)
    a_hi = ra >= rb
    hi, lo = ops.where(a_hi, a, b), ops.where(a_hi, b, a)
    out = hi + ops.log(1 + ops.exp(lo - hi))
    both_neginf = ops.isneginf(ra) & ops.isneginf(rb)
    return ops.where(both_neginf, ops.real(hi).astype(a.dtype), out)


def logcumsumexp(input, dim):
    """torch.logcumsumexp / Tensor.logcumsumexp. Real input: ``ops.logcumsumexp``. Complex input (a Heisen-sequence
    scan in SSM code): MindSpore 2.10's CumulativeLogsumexp takes float16/32/64 only. The values come from a prefix
    scan of the stable complex log-add-exp (ceil(log2(n)) steps); the imaginary part is then put on the branch torch's
    sequential scan reaches (torch adds each term to the running sum without wrapping the angle: where the new term
    has the larger real part the angle restarts near that term's own, elsewhere it moves continuously)."""
    if not _is_complex(input.dtype):
        return ops.logcumsumexp(input, axis=dim)
    if input.ndim == 0 or input.shape[dim] <= 1:
        return input
    axis, n, step = _axis(dim, input.ndim), input.shape[dim], 1
    out = input
    while step < n:
        head = ops.narrow(out, axis, 0, step)
        summed = _logaddexp_complex(ops.narrow(out, axis, step, n - step), ops.narrow(out, axis, 0, n - step))
        out = ops.concat((head, summed), axis)
        step *= 2
    return _torch_branch(input, out, axis, n)


def _torch_branch(z, out, axis, n):
    """``out`` (right modulo 2*pi in its imaginary part) with torch's imaginary parts: at a restart k (the first term,
    or Re z[k] > Re out[k-1]) the angle is Im z[k] + a turn below pi/2; elsewhere out[k-1]'s angle + one below pi."""
    two_pi = 2 * _pymath.pi
    principal = ops.imag(out)
    prev_real = ops.concat((ops.full_like(ops.narrow(principal, axis, 0, 1), -_pymath.inf),
                            ops.narrow(ops.real(out), axis, 0, n - 1)), axis)
    restart = ops.real(z) > prev_real
    prev_principal = ops.concat((ops.narrow(principal, axis, 0, 1), ops.narrow(principal, axis, 0, n - 1)), axis)
    turns = ops.where(restart, ops.round((ops.imag(z) - principal) / two_pi),
                      ops.round((prev_principal - principal) / two_pi))
    total = ops.cumsum(turns, axis)
    before = total - turns  # the running sum before each term
    index_shape = [1] * z.ndim
    index_shape[axis] = n
    index = ops.arange(n, dtype=ms.int32).reshape(index_shape).broadcast_to(restart.shape)
    last = ops.cummax(ops.where(restart, index, ops.zeros_like(index)), axis)[0]
    turns_at = total - ops.gather_elements(before, axis, last)
    return _COMPLEX(ops.real(out), principal + two_pi * turns_at)


def view_as_complex(input):
    """torch.view_as_complex (last dim of size 2 = (real, imag)): no MindSpore function; the result is a copy."""
    return _COMPLEX(input[..., 0], input[..., 1])


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """torch.isin: MindSpore 2.10 has no isin. Compares every element with every test element (memory
    elements.size * test_elements.size).

    ``assume_unique=True`` with inputs that are not unique gives torch's answer too, which is not membership: where
    torch takes its sorting path (test_elements.numel() >= int(10 * elements.numel() ** 0.145), numpy's heuristic)
    it stable-sorts elements and test elements together and marks each element whose next value in that order is
    equal, i.e. an element is "in" when an equal value comes after it in cat(elements, test_elements)."""
    scalar = not isinstance(elements, Tensor)
    elements = _tensor(elements)
    test = _tensor(test_elements).reshape(-1)
    if assume_unique and elements.size and test.size >= int(10.0 * float(elements.size) ** 0.145):
        flat = elements.reshape(-1)
        both = ops.cat((flat, test.astype(flat.dtype)))
        later = ops.arange(both.shape[0]).reshape(1, -1) > ops.arange(flat.shape[0]).reshape(-1, 1)
        found = ((flat.expand_dims(-1) == both) & later).any(-1).reshape(elements.shape)
    else:
        found = (elements.expand_dims(-1) == test).any(-1)
    out = ~found if invert else found
    return out.reshape(()) if scalar else out


# ---------------------------------------------------------------------------------------------------------------
# Indexing


def _scatter_rows(input, dim, index, updates, op):
    """Apply a ``tensor_scatter_*`` op to the slices ``input[..., index[i], ...]`` along ``dim``."""
    x = ops.moveaxis(input, dim, 0)
    idx = index.reshape(-1, 1).astype(ms.int64)
    out = op(x, idx, updates)
    return ops.moveaxis(out, 0, dim)


def _rows(source, dim):
    return ops.moveaxis(source, dim, 0) if source.ndim else source.reshape(1)


def index_add(input, dim, index, source, *, alpha=1):
    """torch.index_add: ``ops.index_add`` needs int32 indices and updates its input in place (measured), which
    torch's functional form never does."""
    src = _rows(source, dim)
    if alpha != 1:
        src = src * alpha
    return _scatter_rows(input, dim, index, src.astype(input.dtype), tensor_scatter_add)


def index_copy(input, dim, index, source):
    """torch.index_copy: MindSpore 2.10 has no index_copy."""
    return _scatter_rows(input, dim, index, _rows(source, dim).astype(input.dtype), ops.tensor_scatter_update)


def index_fill(input, dim, index, value):
    """torch.index_fill: ``ops.index_fill`` only accepts int32 indices (int64 raises TypeError)."""
    x = ops.moveaxis(input, dim, 0)
    rows = index.reshape(-1).shape[0]
    fill = ops.broadcast_to(_tensor(value).astype(input.dtype), (rows,) + x.shape[1:])
    return _scatter_rows(input, dim, index, fill, ops.tensor_scatter_update)


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if _is_float(dtype):
        return float("-inf") if reduce == "amax" else float("inf")
    info = {ms.int8: 7, ms.int16: 15, ms.int32: 31, ms.int64: 63, ms.uint8: 8}[dtype]
    low, high = (0, 2 ** info - 1) if dtype == ms.uint8 else (-(2 ** info), 2 ** info - 1)
    return low if reduce == "amax" else high


def by_parts(op, input, *args, **kwargs):
    """``op(input, ...)`` of a complex ``input`` for an operation that acts on the real and imaginary parts alike
    (linear, or a selection: trace, tril, scatter-add) and has no complex kernel in MindSpore 2.10: ``op`` on each part.
    Real input: ``op`` itself."""
    if not _is_complex(input.dtype):
        return op(input, *args, **kwargs)
    return _COMPLEX(op(ops.real(input), *args, **kwargs), op(ops.imag(input), *args, **kwargs))


def in_complex(value, dtype):
    """``value`` (a tensor or a Python number) as a tensor of the complex ``dtype``: MindSpore 2.10's Mul/Div have no
    kernel for a complex tensor with a real one, and its operators take no Python complex number."""
    return value.astype(dtype) if isinstance(value, Tensor) else Tensor(value, dtype)


def tensor_scatter_add(input, indices, updates):
    """``ops.tensor_scatter_add``, also for complex tensors: MindSpore 2.10's TensorScatterAdd has no complex kernel,
    so the real and imaginary parts are added apart (exact: the sum is linear in them)."""
    if _is_complex(input.dtype):
        updates = updates.astype(input.dtype)
        return _COMPLEX(ops.tensor_scatter_add(ops.real(input), indices, ops.real(updates)),
                        ops.tensor_scatter_add(ops.imag(input), indices, ops.imag(updates)))
    return ops.tensor_scatter_add(input, indices, updates)


_SCATTER = {"sum": "tensor_scatter_add", "mean": "tensor_scatter_add", "prod": "tensor_scatter_mul",
            "amax": "tensor_scatter_max", "amin": "tensor_scatter_min"}


def _scatter_reduce_nd(input, coords, updates, reduce, include_self):
    """torch's scatter_reduce/index_reduce on nd coordinates (``coords`` rows address slices of ``input``)."""
    if reduce not in _SCATTER:
        raise ValueError(f"unknown reduce {reduce!r}; expected one of {sorted(_SCATTER)}")
    op = tensor_scatter_add if _SCATTER[reduce] == "tensor_scatter_add" else getattr(ops, _SCATTER[reduce])
    base = input
    if not include_self:
        base = ops.tensor_scatter_update(input, coords, ops.full(updates.shape, _identity(reduce, input.dtype),
                                                                 dtype=input.dtype))
    out = op(base, coords, updates.astype(input.dtype))
    if reduce == "mean":
        start = ops.ones_like(input) if include_self else ops.tensor_scatter_update(
            ops.ones_like(input), coords, ops.zeros(updates.shape, input.dtype))
        count = tensor_scatter_add(start, coords, ops.ones(updates.shape, input.dtype))
        count = ops.where(count == 0, ops.ones_like(count), count)
        out = out / count if _is_float(input.dtype) or _is_complex(input.dtype) else ops.floor_divide(out, count)
    return out


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """torch.index_reduce ('prod', 'mean', 'amax', 'amin'): MindSpore 2.10 has no index_reduce."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise ValueError(f"index_reduce: unknown reduce {reduce!r}")
    x = ops.moveaxis(input, dim, 0)
    out = _scatter_reduce_nd(x, index.reshape(-1, 1).astype(ms.int64), _rows(source, dim), reduce, include_self)
    return ops.moveaxis(out, 0, dim)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce ('sum', 'prod', 'mean', 'amax', 'amin'): MindSpore 2.10 has no scatter_reduce
    (``tensor_scatter_elements`` only adds). Each index element becomes a full coordinate."""
    dim = _axis(dim, input.ndim)
    grids = list(ops.meshgrid(*[ops.arange(n, dtype=ms.int64) for n in index.shape], indexing="ij"))
    grids[dim] = index.astype(ms.int64)
    coords = ops.stack([g.reshape(-1) for g in grids], axis=1)
    sl = tuple(slice(0, n) for n in index.shape)
    updates = src[sl].reshape(-1)
    return _scatter_reduce_nd(input, coords, updates, reduce, include_self)


def nonzero(input, *, as_tuple=False):
    """torch.nonzero / Tensor.nonzero: the (n, ndim) int64 indices, or with ``as_tuple=True`` one index tensor per
    axis. MindSpore's as_tuple form has no CPU kernel in 2.10 ('The kernel NonZeroExt unregistered'): the columns
    of the default form are split off (a 0-d input counts as one element, as in torch)."""
    if not as_tuple:
        return ops.nonzero(input)
    if input.ndim == 0:
        input = input.reshape(1)
    indices = ops.nonzero(input)
    return tuple(indices[:, axis] for axis in builtins.range(input.ndim))


def linspace(start, end, steps, *, dtype=None):
    """torch.linspace: ops.linspace has no dtype argument (its result is float32, torch's default): the result is
    cast when ``dtype`` is given (an integer dtype truncates, as torch does)."""
    if dtype == ms.float64:  # computed in float32 and cast, float64 would keep float32's rounding
        return _linspace64(start, end, steps)
    out = ops.linspace(start, end, steps)
    return out if dtype is None else out.astype(dtype)


def _window(window, dtype):
    """ops.hann/hamming/kaiser_window return float64 for lengths 0 and 1 whatever dtype says (measured on 2.10)."""
    dtype = ms.float32 if dtype is None else dtype
    return window if window.dtype == dtype else window.astype(dtype)


def hann_window(window_length, periodic=True, *, dtype=None):
    """torch.hann_window: ops.hann_window, in dtype for every length (float32 by default, as torch)."""
    return _window(ops.hann_window(window_length, periodic, dtype=dtype or ms.float32), dtype)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None):
    """torch.hamming_window: ops.hamming_window, in dtype for every length (float32 by default, as torch)."""
    return _window(ops.hamming_window(window_length, periodic, alpha, beta, dtype=dtype or ms.float32), dtype)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None):
    """torch.kaiser_window: ops.kaiser_window, in dtype for every length (float32 by default, as torch)."""
    return _window(ops.kaiser_window(window_length, periodic, beta, dtype=dtype or ms.float32), dtype)


def _linspace64(start, end, steps):
    """torch's float64 linspace: the first half counted from start, the second from end (its kernel's formula)."""
    if steps <= 1:
        return ops.full((steps,), start, dtype=ms.float64)
    # Python numbers become float64 tensors first: a float times a float64 tensor is rounded to float32 on 2.10
    start = start.astype(ms.float64) if isinstance(start, Tensor) else Tensor(start, ms.float64)
    end = end.astype(ms.float64) if isinstance(end, Tensor) else Tensor(end, ms.float64)
    index = ops.arange(steps).astype(ms.float64)
    step = (end - start) / Tensor(steps - 1, ms.float64)
    return ops.where(index < steps // 2, start + index * step, end - (steps - 1 - index) * step)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """torch.scatter / Tensor.scatter (out of place): ``src`` a tensor or a number (or given as ``value=``), reduce
    None, 'add' or 'multiply'. Tensor.scatter(reduce='multiply') gives wrong values in 2.10 (measured: 6 of 24
    elements off), so 'multiply' goes through :func:`scatter_reduce` ('prod'); torch reads only index.shape of
    ``src``, so it is cut to that shape (a number fills it)."""
    if value is not None:
        src = value
    if isinstance(src, Tensor):
        if tuple(src.shape) != tuple(index.shape):
            src = src[tuple(slice(0, n) for n in index.shape)]
        src = src.astype(input.dtype)
    else:
        src = ops.full(index.shape, src, dtype=input.dtype)
    if reduce == "multiply":
        return scatter_reduce(input, dim, index, src, "prod")
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    if reduce is not None:
        raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
    return ops.tensor_scatter_elements(input, index, src, axis=dim, reduction="none")


def scatter_add(input, dim, index, src):
    """Tensor.scatter_add / torch.scatter_add (out of place): adds ``src`` into a copy of ``input`` at ``index``
    along ``dim``. ScatterAddExt has no CPU kernel in 2.10, and ops.tensor_scatter_elements(reduction='add') loses
    an addition now and then when indices repeat (measured: 2 of 6,000 random (3, 5) cases on CPU), so each index
    element becomes a full coordinate for ops.tensor_scatter_add (0 of 6,000). torch reads only index.shape of src."""
    return scatter_reduce(input, dim, index, src.astype(input.dtype), "sum")


def put(input, index, source, accumulate=False):
    """torch.put (index into the flattened input; negative indices count from the end): no MindSpore put."""
    flat = input.reshape(-1)
    idx = ops.remainder(index.reshape(-1, 1).astype(ms.int64), flat.shape[0])
    op = tensor_scatter_add if accumulate else ops.tensor_scatter_update
    return op(flat, idx, source.reshape(-1).astype(input.dtype)).reshape(input.shape)


def take(input, index):
    """torch.take (index the flattened input; negative indices allowed): ``ops.take`` has no CPU kernel in 2.10."""
    flat = input.reshape(-1)
    idx = ops.remainder(index.astype(ms.int64), flat.shape[0])
    return ops.gather(flat, idx.reshape(-1), 0).reshape(index.shape)


def take_along_dim(input, indices, dim=None):
    """torch.take_along_dim (gather with broadcasting; dim=None = the flattened input): no MindSpore function."""
    if dim is None:
        return ops.gather(input.reshape(-1), indices.reshape(-1).astype(ms.int64), 0)
    dim = _axis(dim, input.ndim)
    shape = [builtins.max(a, b) for a, b in zip(input.shape, indices.shape)]
    x = ops.broadcast_to(input, tuple(shape[:dim] + [input.shape[dim]] + shape[dim + 1:]))
    idx = ops.broadcast_to(indices, tuple(shape[:dim] + [indices.shape[dim]] + shape[dim + 1:]))
    return ops.gather_elements(x, dim, idx.astype(ms.int64))


def select(input, dim, index):
    """torch.select: ``ops.select`` is MindSpore's ``where``; index the tensor instead."""
    key = (slice(None),) * _axis(dim, input.ndim) + (index,)
    return input[key]


def as_strided(input, size, stride, storage_offset=None):
    """torch.as_strided, read from the contiguous (row-major) layout of ``input``: MindSpore has no strided views.
    The result is a copy (a gather), not a view."""
    flat = input.reshape(-1)
    idx = Tensor(storage_offset or 0, ms.int64)
    for axis, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = n
        idx = idx + (ops.arange(n, dtype=ms.int64) * st).reshape(tuple(shape))
    return ops.gather(flat, idx.reshape(-1), 0).reshape(tuple(size))


def nonzero_static(input, *, size, fill_value=-1):
    """torch.nonzero_static (exactly ``size`` rows of int64 indices, padded with fill_value): no MindSpore
    function."""
    nz = ops.argwhere(input)
    if nz.shape[0] >= size:
        return nz[:size]
    pad = ops.full((size - nz.shape[0], input.ndim), fill_value, dtype=ms.int64)
    return ops.cat((nz, pad), 0)


def unravel_index(indices, shape):
    """torch.unravel_index (tuple of int64 coordinate tensors): MindSpore 2.10 has no unravel_index."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    rest = ops.remainder(_tensor(indices, ms.int64).astype(ms.int64), _pymath.prod(shape))
    out = []
    for n in reversed(shape):
        out.append(ops.remainder(rest, n))
        rest = ops.floor_divide(rest, n)
    return tuple(reversed(out))


def constant_pad_nd(input, pad, value=0):
    """torch.constant_pad_nd (pairs for the last dims first; negative amounts crop): MindSpore 2.10's ``ops.pad``
    gives wrong values for negative padding from its second call on (measured max abs diff 2.5), so crop by
    slicing and pad only by non-negative amounts."""
    crop = [builtins.max(-p, 0) for p in pad]
    for i in builtins.range(0, len(pad), 2):
        axis = input.ndim - 1 - i // 2
        before, after = crop[i], crop[i + 1]
        if before or after:
            input = ops.narrow(input, axis, before, input.shape[axis] - before - after)
    grow = tuple(builtins.max(p, 0) for p in pad)
    return ops.pad(input, grow, value=value) if builtins.any(grow) else input


def unflatten(input, dim, sizes):
    """torch.unflatten: MindSpore 2.10 has no unflatten; a reshape of ``dim`` into ``sizes``. A -1 in ``sizes`` is
    resolved from ``dim``'s size (reshape infers it from the element count: 0 for an empty tensor, where torch's
    (0, 6) unflattened to (2, -1) is (0, 2, 3))."""
    d = _axis(dim, input.ndim)
    known = 1
    for size in sizes:
        if size != -1:
            known *= size
    sizes = tuple(input.shape[d] // known if size == -1 and known else size for size in sizes)
    return input.reshape(tuple(input.shape[:d]) + sizes + tuple(input.shape[d + 1:]))


# ---------------------------------------------------------------------------------------------------------------
# Shapes and construction


def roll(input, shifts, dims=None):
    """torch.roll / Tensor.roll: ops.roll has no CPU kernel in 2.10 ('The kernel Roll unregistered'); slices and
    concatenates instead. ``dims=None`` rolls the flattened tensor and restores the shape."""
    if dims is None:  # no recursion: graph mode can't compile a function calling itself
        return _roll(input.reshape(-1), shifts, 0).reshape(input.shape)
    return _roll(input, shifts, dims)


def _roll(input, shifts, dims):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise ValueError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}")
    out = input
    for shift, dim in zip(shifts, dims):
        size = out.shape[dim]
        if size != 0 and shift % size != 0:
            cut = size - shift % size
            head, tail = ops.split(out, [cut, size - cut], dim)
            out = ops.cat((tail, head), dim)
    return out


def diag(input, diagonal=0):
    """torch.diag / Tensor.diag: a 1-D input builds a diagonal matrix, a 2-D input extracts its ``diagonal``-th
    diagonal. ops.diag builds a 4-D tensor from a 2-D input and has no offset."""
    if input.ndim == 1:
        return ops.diagflat(input, diagonal)
    if input.ndim == 2:
        return ops.diagonal(input, diagonal)
    raise ValueError("diag(): Supports 1D or 2D tensors. Got %dD" % input.ndim)


def range(start=0, end=None, step=1, dtype=None):  # noqa: A001 - torch's name
    """torch.range (deprecated in torch): ``end`` included, float32 by default; ops.range excludes ``end``.

    Values are start + i * step computed in float64 (like torch's accumulate type), then cast.
    """
    if end is None:
        start, end = 0, start
    count = int(_pymath.floor((end - start) / step)) + 1
    values = ops.arange(0, count, dtype=ms.float64) * step + start
    return values.astype(dtype or ms.float32)


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes (returns the broadcast shape as a tuple): MindSpore has no such function. Shapes are
    constants, so graph mode computes it at compile time."""
    return _broadcast_shapes(shapes)


@ms.constexpr
def _broadcast_shapes(shapes):
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != 1 and out[i] not in (1, n):
                raise RuntimeError(f"shapes {shapes} are not broadcastable")
            if n != 1:
                out[i] = n
    return tuple(out)


def broadcast_tensors(*tensors):
    """torch.broadcast_tensors: MindSpore has only ``ops.broadcast_to`` (one tensor, an explicit shape)."""
    shape = _broadcast_shapes(tuple(t.shape for t in tensors))
    return tuple(ops.broadcast_to(t, shape) for t in tensors)


def is_same_size(input, other) -> bool:
    """torch.is_same_size: compare the shapes."""
    return tuple(input.shape) == tuple(other.shape)


def is_conj(input) -> bool:
    """torch.is_conj: MindSpore has no lazy conjugation bit (``ops.conj`` computes the values), so never set."""
    return False


def is_neg(input) -> bool:
    """torch.is_neg: MindSpore has no lazy negation bit, so never set."""
    return False


def resolve_conj(input):
    """torch.resolve_conj: materialises a lazy conjugation; MindSpore tensors never carry one."""
    return input


def resolve_neg(input):
    """torch.resolve_neg: materialises a lazy negation; MindSpore tensors never carry one."""
    return input


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: a Tensor is returned as is (cast if ``dtype`` differs); other objects become a Tensor
    (Python floats float32, ints int64, as torch)."""
    if isinstance(obj, Tensor):
        out = obj if dtype is None or obj.dtype == dtype else obj.astype(dtype)
        return out.copy() if copy and out is obj else out
    return Tensor(obj, dtype)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """torch.scalar_tensor: a 0-d tensor, float32 unless ``dtype`` says otherwise (also for int/bool ``s``)."""
    return Tensor(s, ms.float32 if dtype is None else dtype)


def _trapezoid_areas(y, x, dx, dim):
    """The trapezoids' areas along ``dim`` (n - 1 of them), in y's (and x's) dtype as torch computes them."""
    n = y.shape[dim]
    avg = (ops.narrow(y, dim, 1, n - 1) + ops.narrow(y, dim, 0, n - 1)) / 2
    if x is not None:
        if x.ndim == 1:
            step = x[1:] - x[:-1]
            shape = [1] * y.ndim
            shape[_axis(dim, y.ndim)] = n - 1
            step = step.reshape(tuple(shape))
        else:
            step = ops.narrow(x, dim, 1, n - 1) - ops.narrow(x, dim, 0, n - 1)
        if avg.dtype in (ms.complex64, ms.complex128) and step.dtype != avg.dtype:
            step = step.astype(avg.dtype)  # MindSpore's Mul takes no complex-by-real pair
        avg = avg * step
    elif dx is not None:
        avg = avg * dx
    return avg


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.cumulative_trapezoid: MindSpore only has the total ``ops.trapz``."""
    return ops.cumsum(_trapezoid_areas(y, x, dx, dim), _axis(dim, y.ndim))


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.trapz / torch.trapezoid: the sum of the trapezoids' areas, in y's dtype: ops.trapz computes float64 in
    float32 and returns float32 for complex64 input (torch keeps both)."""
    if y.shape[dim] < 2:  # no trapezoid: 0 (torch)
        return ops.sum(y * 0.0, _axis(dim, y.ndim))
    return ops.sum(_trapezoid_areas(y, x, dx, dim), _axis(dim, y.ndim))


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient (central differences, one-sided at the edges; a scalar or one scalar per dim as spacing):
    MindSpore has no gradient. Coordinate-tensor spacing is not supported."""
    if edge_order not in (1, 2):
        raise ValueError("gradient: edge_order must be 1 or 2")
    axes = _axes(dim, input.ndim)
    if isinstance(spacing, (int, float)):
        spacing = [spacing] * len(axes)
    spacing = list(spacing)
    if len(spacing) == 1 and len(axes) > 1:
        spacing = spacing * len(axes)
    out = []
    for axis, h in zip(axes, spacing):
        if isinstance(h, Tensor) and h.ndim > 0:
            raise NotImplementedError("gradient: coordinate tensors as spacing are not supported")
        out.append(_gradient_along(input, axis, float(h), edge_order))
    return tuple(out)


def _gradient_along(input, axis, h, edge_order):
    """One axis of ``gradient`` (a function of its own: graph mode can't compile closures over a loop variable)."""
    n = input.shape[axis]
    inner = (ops.narrow(input, axis, 2, n - 2) - ops.narrow(input, axis, 0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (ops.narrow(input, axis, 1, 1) - ops.narrow(input, axis, 0, 1)) / h
        last = (ops.narrow(input, axis, n - 1, 1) - ops.narrow(input, axis, n - 2, 1)) / h
    else:
        first = (-1.5 * ops.narrow(input, axis, 0, 1) + 2 * ops.narrow(input, axis, 1, 1)
                 - 0.5 * ops.narrow(input, axis, 2, 1)) / h
        last = (0.5 * ops.narrow(input, axis, n - 3, 1) - 2 * ops.narrow(input, axis, n - 2, 1)
                + 1.5 * ops.narrow(input, axis, n - 1, 1)) / h
    return ops.cat((first, inner, last), axis)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """torch.stft: ``ops.stft`` spells pad_mode in capitals ('REFLECT', 'CONSTANT') and has no 'replicate' or
    'circular' padding nor align_to_window."""
    if align_to_window:
        raise NotImplementedError("stft: align_to_window=True is not supported")
    mode = {"reflect": "REFLECT", "constant": "CONSTANT"}.get(pad_mode)
    if mode is None:
        raise NotImplementedError(f"stft: pad_mode={pad_mode!r} is not supported (use 'reflect' or 'constant')")
    return ops.stft(input, n_fft, hop_length, win_length, window, center, mode, normalized, onesided,
                    return_complex)


def _overlap_add(frames, hop, total):
    """(B, n_fft, T) frames summed at stride ``hop`` into (B, total): ops.fold with a (1, n_fft) kernel."""
    out = ops.fold(frames, Tensor([1, total], ms.int32), (1, frames.shape[1]), 1, 0, (1, hop))
    return out.reshape((frames.shape[0], total))


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """torch.istft, which MindSpore 2.10 lacks (no ops.istft or mint.istft): torch's algorithm on MindSpore ops.
    Every frame of the complex (freq, frames) or (batch, freq, frames) spectrogram is inverse-FFT'd (ops.irfft when
    onesided, the default unless the input has n_fft rows; ops.ifft otherwise, kept complex for
    ``return_complex=True``), scaled by sqrt(n_fft) when ``normalized``, multiplied by the window (ones of
    ``win_length`` by default, centred in n_fft when shorter), overlap-added at ``hop_length`` (n_fft // 4 by
    default) with fold, and divided by the overlap-added squared window; ``center`` trims n_fft // 2 samples at
    both ends, ``length`` cuts or zero-pads the end. torch's check that the window envelope is non-zero is not
    made: where torch raises, this returns inf/nan."""
    hop = hop_length if hop_length is not None else n_fft // 4
    win_length = win_length if win_length is not None else n_fft
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    n_frames = x.shape[-1]
    if onesided is None:
        onesided = x.shape[-2] != n_fft
    if return_complex and onesided:
        raise RuntimeError("istft: return_complex=True needs a two-sided spectrogram (onesided=False)")
    if onesided:
        frames = ops.irfft(x, n=n_fft, dim=1)
    else:
        frames = ops.ifft(x, n=n_fft, dim=1)
        if not return_complex:
            frames = ops.real(frames)
    if normalized:
        frames = frames * _pymath.sqrt(n_fft)
    real = ms.float64 if x.dtype == ms.complex128 else ms.float32
    w = ops.ones((win_length,), real) if window is None else window.astype(real)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        w = ops.pad(w, (left, n_fft - win_length - left))
    w = w.reshape((1, n_fft, 1))
    total = n_fft + hop * (n_frames - 1)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    envelope = _overlap_add(ops.broadcast_to(w * w, (1, n_fft, n_frames)), hop, total)[:, start:min(end, total)]

    def signal(part):
        y = _overlap_add(part * w, hop, total)[:, start:min(end, total)] / envelope
        return ops.pad(y, (0, end - total)) if end > total else y

    y = ops.Complex()(signal(ops.real(frames)), signal(ops.imag(frames))) if return_complex else signal(frames)
    return y[0] if unbatched else y


# ---------------------------------------------------------------------------------------------------------------
# Random sampling


def _generator_stream(generator, count):
    """NumPy draws owned by a ``mindspore.Generator`` (torch's ``torch.Generator``): a counter-based Philox stream
    keyed by the generator's seed and starting at its offset, which advances by ``count`` as MindSpore's own random
    ops advance it. ``manual_seed`` restarts the stream; two generators seeded alike draw the same numbers. (MindSpore
    2.10's ``mint`` ops that take a generator do not run on the CPU.)"""
    seed, offset = generator._step(Tensor(int(count), ms.int64))  # noqa: SLF001 - the generator's own advance
    bits = np.random.Philox(key=int(seed.asnumpy()) & (2 ** 64 - 1))
    bits.advance(int(offset.asnumpy()))
    return np.random.Generator(bits)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None):
    """torch.randint with ``generator=``: integers in [low, high) of ``size`` drawn from that generator's stream
    (int64 unless ``dtype``); without a generator, ops.randint."""
    size = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    if generator is None:
        out = ops.randint(low, high, size, dtype=_INT64)
    else:
        count = 1
        for n in size:
            count *= int(n)
        out = Tensor(_generator_stream(generator, count).integers(low, high, size=size), _INT64)
    return out if dtype is None else out.astype(dtype)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None):
    """torch.randint_like: integers in [low, high) with the input's shape and (by default) dtype, floats included;
    ops.randint_like only produces integer dtypes. ``randint_like(x, high)`` is torch's one-bound form. With
    ``generator=``: that generator's own stream (see randint)."""
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), generator=generator).astype(dtype or input.dtype)


def _count(shape):
    count = 1
    for n in shape:
        count *= int(n)
    return count


def uniform_draws(shape, generator=None, dtype=ms.float32):
    """Uniform [0, 1) draws of ``shape``: from a ``mindspore.Generator``'s own stream (torch's ``generator=``,
    converted), else ops.rand (MindSpore's global seed). The one source of the generator-aware fills and samplers."""
    shape = tuple(int(n) for n in shape)
    if generator is None:  # ops.rand() of no size gives shape (1,): a 0-d shape is read back
        return ops.rand(*shape, dtype=dtype) if shape else ops.rand(1, dtype=dtype).reshape(())
    return Tensor(_generator_stream(generator, _count(shape)).random(shape), ms.float64).astype(dtype)


def normal_draws(shape, generator=None, dtype=ms.float32):
    """Standard normal draws of ``shape``: from a ``mindspore.Generator``'s own stream, else ops.randn."""
    shape = tuple(int(n) for n in shape)
    if generator is None:  # as uniform_draws: a 0-d shape is read back
        return ops.randn(*shape, dtype=dtype) if shape else ops.randn(1, dtype=dtype).reshape(())
    return Tensor(_generator_stream(generator, _count(shape)).standard_normal(shape), ms.float64).astype(dtype)


def poisson(input, generator=None):
    """torch.poisson: one Poisson sample per element, rate = input, same shape and dtype. ops.random_poisson takes
    a sample shape that it prepends to the rate's shape, and rejects an empty one; one sample is drawn and the
    leading axis dropped. With ``generator=``: drawn from that generator's own stream."""
    if generator is not None:
        rate = input.asnumpy().astype("float64")
        return Tensor(_generator_stream(generator, rate.size).poisson(rate), ms.float64).astype(input.dtype)
    return ops.random_poisson(ms.Tensor([1], ms.int64), input, dtype=input.dtype)[0]


def bernoulli(input, p=None, *, generator=None):
    """Tensor.bernoulli: 0/1 draws with probabilities = input (or the number ``p``: x.bernoulli(0.5)), same dtype and
    shape as input; ops.bernoulli has no CPU kernel in 2.10 ('The kernel BernoulliExt unregistered'). With
    ``generator=``: the uniform draws come from that generator's own stream."""
    return (uniform_draws(input.shape, generator) < (input if p is None else p)).astype(input.dtype)


def rand_like(input, *, generator=None, dtype=None):
    """torch.rand_like with ``generator=``: uniform [0, 1) draws of the input's shape and dtype from that generator's
    own stream (a complex dtype: real and imaginary parts in turn); without one, ops.rand_like."""
    if generator is None:
        return ops.rand_like(input, dtype=dtype)
    return _generated(generator, tuple(input.shape), dtype or input.dtype, lambda g, shape: g.random(shape))


def normal(shape, mean=0.0, stddev=1.0, seed=None, *, generator=None):
    """torch.normal with ``generator=`` (ops.normal's arguments: the shape the converter computed, mean, stddev):
    mean + stddev * N(0, 1) draws from that generator's own stream, float32 unless mean or std is a tensor of
    another float dtype; without a generator, ops.normal."""
    if generator is None:
        return ops.normal(shape, mean, stddev, seed)
    dtypes = [t.dtype for t in (mean, stddev) if isinstance(t, Tensor) and t.dtype in _FLOATS_ALL]
    dtype = dtypes[0] if dtypes else ms.float32
    return (normal_draws(shape, generator, ms.float32) * stddev + mean).astype(dtype)


# ---------------------------------------------------------------------------------------------------------------
# einsum


def _einsum_parse(equation, shapes):
    """Label lists per operand and for the output; '...' becomes private labels aligned from the right."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum(): {len(terms)} operand subscripts for {len(shapes)} operands")
    for term in terms + [rhs]:
        if builtins.any(not (c.isalpha() or c == ".") for c in term):
            raise ValueError(f"einsum(): invalid subscript in {term!r}")
    ell_ndim = 0
    for term, shape in zip(terms, shapes):
        if "..." in term:
            ell_ndim = max(ell_ndim, len(shape) - len(term.replace("...", "")))
    ell = [f"...{i}" for i in builtins.range(ell_ndim)]

    def labels(term, ndim):
        if "..." not in term:
            if len(term) != ndim:
                raise ValueError(f"einsum(): subscripts {term!r} do not match an operand of {ndim} dimensions")
            return list(term)
        left, _, right = term.partition("...")
        count = ndim - len(left) - len(right)
        if count < 0:
            raise ValueError(f"einsum(): subscripts {term!r} do not match an operand of {ndim} dimensions")
        return list(left) + ell[ell_ndim - count:] + list(right)

    inputs = [labels(term, len(shape)) for term, shape in zip(terms, shapes)]
    if arrow:
        output = labels(rhs, len(rhs.replace("...", "")) + ell_ndim) if "..." in rhs else list(rhs)
        if len(set(output)) != len(output):
            raise ValueError(f"einsum(): output subscript repeated in {rhs!r}")
        used = {label for labels_ in inputs for label in labels_}
        missing = [label for label in output if label not in used]
        if missing:
            raise ValueError(f"einsum(): output subscript {missing[0]!r} does not appear in the inputs")
    else:  # implicit output: '...' first, then the labels seen exactly once, in alphabetical order
        counts = {}
        for labels_ in inputs:
            for label in labels_:
                counts[label] = counts.get(label, 0) + 1
        output = ell + sorted(c for c, n in counts.items() if n == 1 and not c.startswith("..."))
    return inputs, output


def _einsum_diagonals(labels):
    """Repeated labels within one operand (``ii``): the ops.diagonal axis pairs, in order (each moves the diagonal
    to the last axis), and the labels after them."""
    labels = list(labels)
    pairs = []
    while len(set(labels)) != len(labels):
        second = next(i for i, label in enumerate(labels) if label in labels[:i])
        first = labels.index(labels[second])
        pairs.append((first, second))
        labels = [lb for i, lb in enumerate(labels) if i not in (first, second)] + [labels[first]]
    return tuple(pairs), labels


def _einsum_sum_axes(labels, keep):
    """Axes of the labels not in ``keep`` (to sum out) and the labels left."""
    return tuple(i for i, label in enumerate(labels) if label not in keep), [lb for lb in labels if lb in keep]


def _einsum_arrange(labels, order, sizes, own):
    """(permutation or None, target shape or None): the operand's axes in ``order``; the target shape (size specs,
    :func:`_einsum_spec`) only when a size-1 axis of the operand (``own``: its sizes, None where known only at run
    time) must be broadcast."""
    perm = tuple(labels.index(label) for label in order)
    broadcast = builtins.any(own[label] == 1 and sizes[label] != 1 for label in order)
    shape = tuple(_einsum_spec(sizes, (label,)) for label in order) if broadcast else None
    return (None if perm == tuple(builtins.range(len(perm))) else perm), shape


def _einsum_spec(sizes, labels):
    """The product of the labels' sizes as a constant: an int when every size is known at compile time, else
    (the known factor, (operand, axis), ...), the axes whose size :func:`_einsum_dims` reads when the call runs."""
    known, refs = 1, ()
    for label in labels:
        size = sizes[label]
        if isinstance(size, int):
            known *= size
        else:
            refs += (size,)
    return (known,) + refs if refs else known


@ms.constexpr
def _einsum_plan(equation, shapes):
    """The whole contraction as constants (pure Python on the equation and the shapes; a constexpr so graph mode
    computes it at compile time): per operand (diagonal pairs, axes to sum), then per later operand one batched
    matmul step, then the final sum, permutation and shape. A size GRAPH_MODE knows only at run time (None here: an
    operand whose extent depends on the data, as ``one_hot`` of a depth read from a tensor) is a reference
    (operand, axis) in the shapes the steps use (:func:`_einsum_spec`), read from the operand when the call runs."""
    inputs, output = _einsum_parse(equation, shapes)
    sizes, runtime = {}, {}
    for i, (shape, labels) in enumerate(zip(shapes, inputs)):
        for axis, (label, size) in enumerate(zip(labels, shape)):
            if size is None or size < 0:
                runtime.setdefault(label, (i, axis))
            else:
                _einsum_size(sizes, label, size)
    for label, ref in runtime.items():
        if sizes.get(label, 1) == 1:  # no operand gives it a known extent above 1: the run-time one
            sizes[label] = ref
    own = [{label: (size if size is not None and size >= 0 else None) for label, size in zip(labels, shape)}
           for shape, labels in zip(shapes, inputs)]
    prepared = [list(_einsum_diagonals(labels)) for labels in inputs]
    for label in output:
        sizes.setdefault(label, 1)
    wanted = [set(output).union(*(set(lb) for _, lb in prepared[i:])) for i in builtins.range(1, len(prepared) + 1)]
    first_sum, labels = _einsum_sum_axes(prepared[0][1], wanted[0])
    operands = [(prepared[0][0], first_sum)]
    steps = []
    x_own = own[0]
    for i in builtins.range(1, len(prepared)):
        pairs, ly = prepared[i]
        keep = wanted[i]
        y_sum, ly = _einsum_sum_axes(ly, keep | set(labels))
        x_sum, labels = _einsum_sum_axes(labels, keep | set(ly))
        operands.append((pairs, y_sum))
        batch = [lb for lb in labels if lb in ly and lb in keep]
        summed = [lb for lb in labels if lb in ly and lb not in keep]
        a_only = [lb for lb in labels if lb not in ly]
        b_only = [lb for lb in ly if lb not in labels]
        a_perm, a_shape = _einsum_arrange(labels, batch + a_only + summed, sizes, x_own)
        b_perm, b_shape = _einsum_arrange(ly, batch + summed + b_only, sizes, own[i])
        prod = [_einsum_spec(sizes, group) for group in (batch, a_only, summed, b_only)]
        labels = batch + a_only + b_only
        x_own = sizes  # the product has every label at its full extent
        steps.append((x_sum, a_perm, a_shape, (prod[0], prod[1], prod[2]), b_perm, b_shape,
                      (prod[0], prod[2], prod[3]), tuple(_einsum_spec(sizes, (lb,)) for lb in labels)))
    last_sum, labels = _einsum_sum_axes(labels, set(output))
    perm, shape = _einsum_arrange(labels, output, sizes, x_own)
    return tuple(operands), tuple(steps), (last_sum, perm, shape)


def _einsum_size(sizes, label, size):
    """A label's extent: a size-1 axis broadcasts to the others' (an empty axis, 0, is an extent like any other)."""
    if sizes.get(label, 1) != 1 and size != 1 and sizes[label] != size:
        raise ValueError(f"einsum(): subscript {label!r} has sizes {sizes[label]} and {size}")
    if sizes.get(label, 1) == 1:
        sizes[label] = size


def _einsum_dims(shapes, specs):
    """The shape the plan's size specs (:func:`_einsum_spec`) name: constants as they are, a run-time size read from
    its operand's shape (in GRAPH_MODE a value of the graph)."""
    dims = ()
    for spec in specs:
        if isinstance(spec, int):
            dims = dims + (spec,)
        else:
            n = spec[0]
            for ref in spec[1:]:
                n = n * shapes[ref[0]][ref[1]]
            dims = dims + (n,)
    return dims


def _einsum_prepare(x, pairs, sum_axes):
    for first, second in pairs:
        x = ops.diagonal(x, 0, first, second)
    return x.sum(axis=sum_axes) if sum_axes else x


def _einsum_arranged(x, perm, shape, shapes):
    if perm is not None:
        x = ops.transpose(x, perm)
    return x if shape is None else ops.broadcast_to(x, _einsum_dims(shapes, shape))


def einsum(equation, *operands):
    """torch.einsum: ops.einsum has no CPU kernel in 2.10 (and mint.einsum is Ascend only).

    Parses the equation (explicit or implicit output, '...' broadcasting, repeated labels = diagonals) and
    contracts the operands left to right, each pair as one batched ops.matmul; labels no later term needs are
    summed out first; operands of different dtypes are promoted as torch does. An operand whose extent GRAPH_MODE
    knows only at run time (data-dependent) is planned the same way, its size read from it when the call runs.
    torch's sublist form einsum(x, [0, 1], ...) is not supported.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError("mindport.runtime.math.einsum: only the equation-string form is supported")
    common = operands[0].dtype
    for operand in operands[1:]:
        common = _promote_types(common, operand.dtype)
    # torch promotes the operands (an int64 position index with float frequencies: float32); MindSpore's MatMul
    # refuses mixed dtypes
    operands = tuple(x if x.dtype == common else x.astype(common) for x in operands)
    shapes = tuple(x.shape for x in operands)
    prepared, steps, final = _einsum_plan(equation, shapes)
    x = _einsum_prepare(operands[0], prepared[0][0], prepared[0][1])
    for i, step in enumerate(steps):
        x_sum, a_perm, a_shape, a_mat, b_perm, b_shape, b_mat, out_shape = step
        y = _einsum_prepare(operands[i + 1], prepared[i + 1][0], prepared[i + 1][1])
        if x_sum:
            x = x.sum(axis=x_sum)
        a = _einsum_arranged(x, a_perm, a_shape, shapes).reshape(_einsum_dims(shapes, a_mat))
        b = _einsum_arranged(y, b_perm, b_shape, shapes).reshape(_einsum_dims(shapes, b_mat))
        if a_mat[2] == 0:  # an empty summed axis: zeros, as torch (MatMul with no terms left its output unwritten)
            x = ops.zeros(_einsum_dims(shapes, out_shape), common)
        else:
            x = ops.matmul(a, b).reshape(_einsum_dims(shapes, out_shape))
    last_sum, perm, shape = final
    if last_sum:
        x = x.sum(axis=last_sum)
    return _einsum_arranged(x, perm, shape, shapes)


# ---------------------------------------------------------------------------------------------------------------
# Recurrent cells (the functional forms behind nn.LSTMCell & co.)


def _linear(x, w, b):
    y = ops.matmul(x, w.T)
    return y if b is None else y + b


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell: returns (h', c'); MindSpore has the cell layer only. Gate order i, f, g, o as torch."""
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = ops.chunk(gates, 4, 1)
    c2 = ops.sigmoid(f) * c + ops.sigmoid(i) * tanh(g)
    return ops.sigmoid(o) * tanh(c2), c2


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.gru_cell: MindSpore has the cell layer only. Gate order r, z, n as torch."""
    gi, gh = _linear(input, w_ih, b_ih), _linear(hx, w_hh, b_hh)
    i_r, i_z, i_n = ops.chunk(gi, 3, 1)
    h_r, h_z, h_n = ops.chunk(gh, 3, 1)
    r, z = ops.sigmoid(i_r + h_r), ops.sigmoid(i_z + h_z)
    n = tanh(i_n + r * h_n)
    return n + z * (hx - n)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.rnn_tanh_cell: MindSpore has the cell layer only."""
    return tanh(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.rnn_relu_cell: MindSpore has the cell layer only."""
    return ops.relu(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


# ---------------------------------------------------------------------------------------------------------------
# dtype logic (torch's promotion rules; MindSpore has no promote_types/result_type/can_cast)

_INTS = (ms.uint8, ms.int8, ms.int16, ms.int32, ms.int64)
_FLOAT_RANK = {ms.float16: 1, ms.bfloat16: 1, ms.float32: 2, ms.float64: 3}


def _category(dtype) -> int:
    if dtype == ms.bool_:
        return 0
    if dtype in mstype.int_type or dtype in mstype.uint_type:
        return 1
    if _is_float(dtype):
        return 2
    if _is_complex(dtype):
        return 3
    raise TypeError(f"unsupported dtype {dtype}")


def _to_complex(dtype):
    return ms.complex128 if dtype == ms.float64 else ms.complex64


def promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both dtypes convert to (torch's table, not numpy's: a float16 and
    an int64 give float16). Dtypes are constants: graph mode computes it at compile time."""
    return _promote_types(type1, type2)


@ms.constexpr
def _promote_types(type1, type2):
    if type1 == type2:
        return type1
    c1, c2 = _category(type1), _category(type2)
    if c1 != c2:
        high, low = (type1, type2) if c1 > c2 else (type2, type1)
        if _is_complex(high) and low == ms.float64:
            return ms.complex128
        return high
    if c1 == 1:
        if type1 not in _INTS or type2 not in _INTS:
            raise TypeError(f"promote_types: no promotion for {type1} and {type2}")
        if ms.uint8 in (type1, type2):
            other = type2 if type1 == ms.uint8 else type1
            return ms.int16 if other == ms.int8 else other
        return type1 if _INTS.index(type1) > _INTS.index(type2) else type2
    if c1 == 2:
        r1, r2 = _FLOAT_RANK[type1], _FLOAT_RANK[type2]
        if r1 == r2:  # float16 with bfloat16
            return ms.float32
        return type1 if r1 > r2 else type2
    return ms.complex128


def _combine(higher, lower):
    """torch's combine_categories: ``lower`` (lower priority operands) only counts when its category is higher."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _is_complex(higher):
        return higher
    if _is_complex(lower):
        return _to_complex(higher) if _is_float(higher) else lower
    if _is_float(higher):
        return higher
    if higher == ms.bool_ or _is_float(lower):
        return _promote_types(higher, lower)
    return higher


def result_type(tensor1, tensor2):
    """torch.result_type: dimensioned tensors decide within a category; 0-d tensors and Python numbers only when
    their category is higher (a Python float is float32, an int int64). Computed from constants (dtypes, ranks,
    Python numbers): graph mode does it at compile time."""
    return _result_type(_operand(tensor1), _operand(tensor2))


def _operand(value):
    """A tensor as its constant (dtype, rank); a Python number as itself."""
    if isinstance(value, Tensor):
        return (value.dtype, value.ndim)
    return value


def _result_type(operand1, operand2):
    return _result_types((operand1, operand2))


@ms.constexpr
def _result_types(operands):
    """torch's result_type of any number of operands, each a (dtype, rank) constant or a Python number."""
    slots = {"dim": None, "zero": None, "wrapped": None}
    for value in operands:
        if isinstance(value, tuple):
            dtype, slot = value[0], "dim" if value[1] else "zero"
        elif isinstance(value, bool):
            dtype, slot = ms.bool_, "wrapped"
        elif isinstance(value, int):
            dtype, slot = ms.int64, "wrapped"
        elif isinstance(value, float):
            dtype, slot = ms.float32, "wrapped"
        elif isinstance(value, builtins.complex):
            dtype, slot = ms.complex64, "wrapped"
        else:
            raise TypeError(f"result_type: unsupported operand {value!r}")
        slots[slot] = dtype if slots[slot] is None else _promote_types(slots[slot], dtype)
    return _combine(slots["dim"], _combine(slots["zero"], slots["wrapped"]))


def can_cast(from_, to) -> bool:
    """torch.can_cast (casting allowed under torch's same-kind rules): no MindSpore function."""
    if _is_complex(from_) and not _is_complex(to):
        return False
    if _is_float(from_) and _category(to) == 1:
        return False
    return not (from_ != ms.bool_ and to == ms.bool_)


def get_default_dtype():
    """torch.get_default_dtype: MindSpore has no global default dtype; its floating-point default is float32."""
    return ms.float32


def set_default_dtype(d):
    """torch.set_default_dtype: MindSpore has no global default dtype; its floating-point default is float32, which
    is torch's own default, so ``set_default_dtype(float32)`` (the scientific scripts' explicit setting, often through
    a name, ShotaDeguchi/PINN_Torch's ``d_type``) changes nothing in either framework. Another dtype would change
    what every factory makes in torch: it raises here, at run time, rather than compute in float32."""
    if d != ms.float32:
        raise NotImplementedError("mindport: torch.set_default_dtype to a dtype other than float32: MindSpore has no "
                                  "global default dtype (its floating-point default is always float32): pass dtype= "
                                  "to the factory functions or cast with .astype(dtype)")


# --- truth tests: any/all of a non-bool tensor ------------------------------------------------------------------

def _truth(input):
    return input if input.dtype == ms.bool_ else input != 0


def any(input, dim=None, keepdim=False):  # noqa: A001 - torch's name
    """torch.any / Tensor.any: True where some element is non-zero. ops.any on a float tensor gives wrong answers
    (``ops.any(Tensor([[0., 1.5], [0., 0.]]))`` is False, measured on 2.10): the input is tested against 0 first.
    False over an empty extent (ops.any returns True there). A NumPy receiver: its own ``any`` (``_own_method``)."""
    if _own_method(input, "any"):
        return _own_reduction(input, "any", dim, keepdim)
    return _or_empty(ops.any(_truth(input), () if dim is None else dim, keepdim), input, dim, keepdim, False)


def all(input, dim=None, keepdim=False):  # noqa: A001 - torch's name
    """torch.all / Tensor.all: True where every element is non-zero (tested against 0 first, as ``any``); True over
    an empty extent. A NumPy receiver: its own ``all`` (``_own_method``): mingen-pan's gridworld helper tests
    ``(state[i, j] == obj).all()`` on NumPy arrays, and the project's facts (a tensor's ``np.argmax`` reaches its
    moves) made the receiver a possible tensor; ReduceAll refused the array."""
    if _own_method(input, "all"):
        return _own_reduction(input, "all", dim, keepdim)
    return _or_empty(ops.all(_truth(input), () if dim is None else dim, keepdim), input, dim, keepdim, True)


# --- integer accumulation: torch sums integer and bool tensors in int64 ------------------------------------------

_INTEGRAL = (ms.bool_, ms.int8, ms.int16, ms.int32, ms.uint8)


def _accumulate_dtype(input, dtype):
    return ms.int64 if dtype is None and input.dtype in _INTEGRAL else dtype


def cumsum(input, dim, *, dtype=None):
    """torch.cumsum / Tensor.cumsum: int32/bool inputs accumulate in int64 (ops.cumsum keeps int32)."""
    dtype = _accumulate_dtype(input, dtype)
    return ops.cumsum(input if dtype is None else input.astype(dtype), dim)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nansum / Tensor.nansum: int32/bool inputs sum in int64 (ops.nansum keeps int32); 0 over an empty
    extent."""
    dtype = _accumulate_dtype(input, dtype)
    result = ops.nansum(input if dtype is None else input.astype(dtype), dim, keepdim)
    return _or_empty(result, input, dim, keepdim, 0)


def trace(input):
    """torch.trace: an int32 matrix's trace is int64 in torch (ops.trace keeps int32). MindSpore 2.10's Trace has no
    complex kernel: a complex trace is the traces of the real and imaginary parts."""
    if _is_complex(input.dtype):
        return by_parts(ops.trace, input)
    dtype = _accumulate_dtype(input, None)
    return ops.trace(input if dtype is None else input.astype(dtype))


def abs(input):  # noqa: A001 - torch's name
    """torch.abs / Tensor.abs: a complex tensor's modulus is real (float32 for complex64); ops.abs keeps complex."""
    if _is_complex(input.dtype):
        return ops.ComplexAbs()(input)
    return ops.abs(input)


def real_abs(input):
    """|x| as a real tensor for complex input (ops.ComplexAbs), the input itself otherwise."""
    return ops.ComplexAbs()(input) if _is_complex(input.dtype) else input


# --- float16 results that MindSpore computes in float32 and returns as float32 -----------------------------------

def _like(result, input):
    return result.astype(input.dtype) if input.dtype == ms.float16 and result.dtype != input.dtype else result


def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch.cov / Tensor.cov: ops.cov, in the input's dtype (ops.cov returns float32 for float16)."""
    return _like(ops.cov(input, correction=correction, fweights=fweights, aweights=aweights), input)


def histc(input, bins=100, min=0, max=0):  # noqa: A002 - torch's argument names
    """torch.histc / Tensor.histc: ops.histc, in the input's dtype (float32 for float16 in MindSpore); an empty input
    gives ``bins`` zeros (ops.histc's counts are uninitialised memory there)."""
    if _empty_extent(input.shape, None):
        return ops.zeros((bins,), input.dtype)
    return _like(ops.histc(input, bins, min, max), input)


def ldexp(input, other):
    """torch.ldexp: input * 2**other, in the input's float dtype (ops.ldexp returns float32 for float16). Complex
    input (no complex Mul with a real tensor): 2**other in complex."""
    if _is_complex(input.dtype):
        return input * in_complex(ops.pow(2.0, other.astype(ms.float32)), input.dtype)
    return _like(ops.ldexp(input, other), input)


def _complex_draw(draw, size, dtype, scale):
    """A complex tensor whose real and imaginary parts are independent draws of ``draw`` times ``scale``."""
    part = ms.float64 if dtype == ms.complex128 else ms.float32
    return ops.Complex()(draw(*size, dtype=part) * scale, draw(*size, dtype=part) * scale)


def _sizes(size):
    """torch's ``*size``: ``f(2, 3)`` or ``f((2, 3))``."""
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


def _generated(generator, size, dtype, draw):
    """``draw(numpy_generator, shape)`` from a ``mindspore.Generator``'s own stream (torch's ``generator=``), as a
    float32 tensor unless ``dtype``; a complex dtype takes real and imaginary parts from the stream in turn."""
    count = 1
    for n in size:
        count *= int(n)
    stream = _generator_stream(generator, count * (2 if dtype is not None and _is_complex(dtype) else 1))
    if dtype is not None and _is_complex(dtype):
        part = ms.float64 if dtype == ms.complex128 else ms.float32
        re, im = Tensor(draw(stream, size), part), Tensor(draw(stream, size), part)
        return ops.Complex()(re, im)
    out = Tensor(draw(stream, size), ms.float32)
    return out if dtype is None else out.astype(dtype)


def randn(*size, generator=None, dtype=None, seed=None):
    """torch.randn: ops.randn, and for a complex dtype real and imaginary parts drawn N(0, 1/2) each, as torch does
    (ops.randn takes float dtypes only). With ``generator=`` (a torch.Generator, converted to mindspore.Generator)
    the draws come from that generator's own stream: seeded alike, two generators draw the same numbers."""
    if generator is not None:
        scale = 0.5 ** 0.5 if dtype is not None and _is_complex(dtype) else 1.0
        return _generated(generator, _sizes(size), dtype, lambda g, shape: g.standard_normal(shape) * scale)
    if dtype is not None and _is_complex(dtype):
        return _complex_draw(ops.randn, size, dtype, 0.5 ** 0.5)
    return ops.randn(*size, dtype=dtype, seed=seed)


def rand(*size, generator=None, dtype=None, seed=None):
    """torch.rand: ops.rand, and for a complex dtype real and imaginary parts each uniform on [0, 1), as torch
    does (ops.rand takes float dtypes only). With ``generator=``: that generator's own stream (see randn)."""
    if generator is not None:
        return _generated(generator, _sizes(size), dtype, lambda g, shape: g.random(shape))
    if dtype is not None and _is_complex(dtype):
        return _complex_draw(ops.rand, size, dtype, 1.0)
    return ops.rand(*size, dtype=dtype, seed=seed)


def randperm(n, *, generator=None, dtype=None):
    """torch.randperm with ``generator=``: a permutation of range(n) drawn from that generator's own stream (int64
    unless ``dtype``); without a generator, ops.randperm."""
    if generator is None:
        return ops.randperm(n, dtype=dtype or _INT64)
    out = Tensor(_generator_stream(generator, int(n)).permutation(int(n)), _INT64)
    return out if dtype is None else out.astype(dtype)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """torch.randn_like: standard normal draws of the input's shape and dtype (ops.randn_like gives float32 for a
    float16 input; a complex input draws real and imaginary parts with variance 1/2 each, as torch). With
    ``generator=``: that generator's own stream."""
    dtype = dtype or input.dtype
    if generator is not None:  # that generator's own stream (see randn)
        scale = 0.5 ** 0.5 if _is_complex(dtype) else 1.0
        return _generated(generator, tuple(input.shape), dtype, lambda g, shape: g.standard_normal(shape) * scale)
    if _is_complex(dtype):
        part = ms.float64 if dtype == ms.complex128 else ms.float32
        re, im = ops.randn(input.shape, dtype=part), ops.randn(input.shape, dtype=part)
        return ops.Complex()(re, im) * (0.5 ** 0.5)
    return ops.randn(input.shape, dtype=dtype if dtype in _FLOATS_ALL else ms.float32).astype(dtype)


_FLOATS_ALL = (ms.float16, ms.float32, ms.float64, ms.bfloat16)


def weighted_losses(losses, weight, input, reduction, by_weight):
    """torch's weighted element losses (mse_loss, l1_loss, huber_loss with ``weight``): the weight must have the
    input's shape (torch raises otherwise), 'none' the weighted losses, 'sum' their sum, 'mean' their sum over the
    weights' sum (``by_weight``) or their mean."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = losses * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.sum() / weight.sum() if by_weight else weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def l1_loss(input, target, reduction="mean", weight=None):
    """torch.nn.functional.l1_loss: |input - target| reduced; a complex difference's modulus is real. With torch 2.x's
    ``weight``: as mse_loss's (:func:`weighted_losses`: 'mean' over the weights' sum)."""
    diff = real_abs(input - target) if _is_complex(input.dtype) else ops.abs(input - target)
    if weight is not None:
        return weighted_losses(diff, weight, input, reduction, by_weight=True)
    if reduction == "mean":
        return diff.mean()
    if reduction == "sum":
        return diff.sum()
    return diff
# ---------------------------------------------------------------------------------------------------------------
# torch.jit: TorchScript compiles or marks functions; MindSpore runs the Python code as written (PyNative), which
# computes the same values. These keep the calls and decorators meaningful without handing MindSpore code to torch.

def jit_script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script (a decorator or a call on a function or module): the object itself. TorchScript compiles
    it; a compiled MindSpore function would be ``mindspore.jit``, whose graph syntax is narrower than torch's."""
    return obj


def jit_ignore(drop=False, **kwargs):
    """torch.jit.ignore, bare (``@torch.jit.ignore``) or called (``@torch.jit.ignore(drop=True)``): the function
    is left as Python, which is what runs here anyway."""
    if callable(drop):
        return drop
    return jit_script


def jit_unused(fn):
    """torch.jit.unused / torch.jit.export: markers for the TorchScript compiler; the function itself."""
    return fn


def jit_is_scripting() -> bool:
    """torch.jit.is_scripting / is_tracing: False, as in eager torch (nothing is being scripted or traced)."""
    return False


def jit_annotate(the_type, the_value):
    """torch.jit.annotate(type, value): a type hint for TorchScript; the value."""
    return the_value


jit_Final = typing.Final  # noqa: N816 - torch.jit.Final[T] annotates constants; typing's Final means the same
# torch.jit.annotations re-exports typing's generics for TorchScript signatures (``from torch.jit.annotations import
# List``: timm's densenet); they are typing's own objects
jit_List, jit_Dict, jit_Tuple, jit_Optional = typing.List, typing.Dict, typing.Tuple, typing.Optional  # noqa: N816


def _atleast(fn, tensors):
    """torch.atleast_Nd(*tensors): one tensor gives a tensor; several, or one list/tuple of them, give a tuple (and
    none, an empty tuple); ops.atleast_Nd takes a single tensor or list."""
    if len(tensors) == 1:
        tensors = tensors[0]
    if isinstance(tensors, Tensor):
        return fn(tensors)
    if not tensors:
        return ()
    return tuple(fn(list(tensors)))


def atleast_1d(*tensors):
    """torch.atleast_1d: also with several tensors (a tuple back), which ops.atleast_1d refuses."""
    return _atleast(ops.atleast_1d, tensors)


def atleast_2d(*tensors):
    """torch.atleast_2d: also with several tensors (a tuple back), which ops.atleast_2d refuses."""
    return _atleast(ops.atleast_2d, tensors)


def atleast_3d(*tensors):
    """torch.atleast_3d: also with several tensors (a tuple back), which ops.atleast_3d refuses."""
    return _atleast(ops.atleast_3d, tensors)


def meshgrid(*inputs, indexing="ij"):
    """torch.meshgrid: the tensors as varargs or as one list/tuple (ops.meshgrid takes varargs only)."""
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    return ops.meshgrid(*inputs, indexing=indexing)


# ---------------------------------------------------------------------------------------------------------------
# torch's int-to-float promotion. torch computes the floating-only functions (log, exp, sqrt, sin, sigmoid, ...) of
# an integer or bool tensor in the default dtype (float32); MindSpore 2.10's kernels refuse integer inputs ("Select CPU
# operator[Log] fail! Unsupported data type"). One wrapper does it for the whole family: the mapping entries of
# these functions (torch.X, Tensor.X and their aliases) name mindport.runtime.math.X; mindport.runtime.special wraps
# its own functions with the same helper.

_FLOATING = (ms.float16, ms.float32, ms.float64, ms.bfloat16, ms.complex64, ms.complex128)


def floating(input):
    """``input`` as torch computes a floating-only function of it: an integer or bool tensor in float32 (the
    default dtype), a float or complex tensor as it is. A Python number (``torch.exp(self.init_std)`` in a
    TorchScript method, where torch's math functions take numbers; eager torch refuses them) as a float32 0-d
    tensor."""
    if isinstance(input, Tensor):
        return input.astype(ms.float32) if input.dtype not in _FLOATING else input
    if isinstance(input, (int, float)):
        return Tensor(float(input), ms.float32)
    return input


def int_to_float(fn, name=None, doc=None):
    """``fn`` computing on ``floating(input)`` (its first argument); the other arguments pass through."""
    def promoted(input, *args, **kwargs):
        return fn(floating(input), *args, **kwargs)

    promoted.__name__ = promoted.__qualname__ = name or fn.__name__
    promoted.__doc__ = doc or fn.__doc__
    return promoted


from mindport.runtime.promotion import INT_TO_FLOAT  # noqa: E402 - the names, shared with the converter

for _name in INT_TO_FLOAT:
    globals()[_name] = int_to_float(
        getattr(ops, _name), _name,
        f"torch.{_name} / Tensor.{_name}: ops.{_name}, with an integer or bool input computed in float32 as torch "
        f"promotes it (MindSpore's kernel refuses integer inputs).")
del _name


def tanh(input):
    """torch.tanh / Tensor.tanh / F.tanh / nn.Tanh, to torch's precision. MindSpore 2.10's float32 tanh kernel
    (ops.tanh, nn.Tanh) is off by up to 1.0e-4 for 3 < |x| < 8 and exceeds 1 there (1.0000098 at x = 5; torch: 3e-8
    from float64): a model with a tanh of such pre-activations (TD3's ``max_action * tanh(...)``) diverged.
    ``tanh(x) = expm1(2x) / (expm1(2x) + 2)`` is within 1.5e-7 over [-12, 12] with MindSpore's expm1 (no cancellation:
    expm1(2x) > -1, so the denominator stays in (1, inf)), bounded by 1, 0 at 0, -1 at -inf; its derivative is
    torch's, 1 at 0 included. x is held at the value past which tanh rounds to 1 in its dtype (10 in float32; 5.5 in
    float16, 20 in float64: expm1(2x) stays finite) by a select on the input, so +inf gives 1, NaN stays NaN and no
    inf reaches the gradient. Six operations a call (a recurrent step calls it each step: the sign-split form it
    replaces took eleven, 2.2x the time, slow29). Integer and bool inputs are computed in float32, as torch promotes
    them; complex ones go to ops.tanh."""
    x = floating(input)
    if x.dtype in (ms.complex64, ms.complex128):
        return ops.tanh(x)
    top = 5.5 if x.dtype == ms.float16 else (20.0 if x.dtype == ms.float64 else 10.0)  # tanh rounds to 1 past it
    e = ops.expm1(ops.where(x > top, top, x) * 2)
    return e / (e + 2)


# ---------------------------------------------------------------------------------------------------------------
# torch's add*mm family on integer tensors: torch casts the scalars beta and alpha to the tensors' integer dtype
# (0.5 -> 0, 2.5 -> 2: truncated) and keeps that dtype; MindSpore 2.10 computes with the float scalars and returns
# float32 (ops.addmm, ops.addbmm), refuses them (ops.baddbmm: "For inputs of type not FloatTensor or DoubleTensor,
# argument ... must be integer"), and ops.addbmm turns int32 into int64 even with integer scalars. The same cast
# applies to _foreach_addcmul's value (mindport.runtime.foreach).

def integral_scalar(tensor, value):
    """A Python number scaling an integer tensor, as torch applies it: truncated to an integer (torch casts the
    scalar to the tensor's dtype: addmm's beta/alpha, _foreach_addcmul's value). Otherwise ``value`` itself."""
    if isinstance(tensor, Tensor) and tensor.dtype not in _FLOATING and isinstance(value, float):
        return int(value)
    return value


def _integral_scalars(fn, input, m1, m2, beta, alpha):
    """``fn(input, m1, m2, beta=, alpha=)`` as torch computes it on integer tensors: beta and alpha truncated to
    integers, the result in the tensors' dtype. Float and complex tensors pass through unchanged."""
    if isinstance(input, Tensor) and input.dtype not in _FLOATING:
        dtype = _promote_types(input.dtype, m1.dtype)
        beta, alpha = integral_scalar(input, beta), integral_scalar(input, alpha)
        return fn(input, m1, m2, beta=beta, alpha=alpha).astype(dtype)
    return fn(input, m1, m2, beta=beta, alpha=alpha)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """torch.addmm / Tensor.addmm: ops.addmm, integer tensors as torch computes them (see above)."""
    return _integral_scalars(ops.addmm, input, mat1, mat2, beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """torch.addbmm / Tensor.addbmm: ops.addbmm, integer tensors as torch computes them (see above)."""
    return _integral_scalars(ops.addbmm, input, batch1, batch2, beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """torch.baddbmm / Tensor.baddbmm: ops.baddbmm, integer tensors as torch computes them (see above). Complex input
    (ops.baddbmm takes no complex beta/alpha): beta * input + alpha * batch1 @ batch2 in complex."""
    if _is_complex(input.dtype):
        d = input.dtype
        product = in_complex(alpha, d) * ops.bmm(in_complex(batch1, d), in_complex(batch2, d))
        return product if beta == 0 else in_complex(beta, d) * input + product
    return _integral_scalars(ops.baddbmm, input, batch1, batch2, beta, alpha)


# ---------------------------------------------------------------------------------------------------------------
# A Python complex number in an arithmetic expression with a tensor (``A * -1j``, ``x + 2j``): MindSpore 2.10's
# operators take no Python complex ("Failed calling Mul with ... other=<class 'complex'>"), and its Mul/Div refuse a
# real tensor with a complex one. torch computes in complex (complex64, complex128 for a float64 tensor).

def _arithmetic(operator, a, b):
    """``a <operator> b`` for the operator's symbol (an if-chain: a graph compiles no dict of lambdas)."""
    if operator == "+":
        return a + b
    if operator == "-":
        return a - b
    if operator == "*":
        return a * b
    if operator == "/":
        return a / b
    return a ** b


def complex_operation(operator, left, right):
    """``left <operator> right`` where a side is complex (a Python complex number, or a tensor the converter saw
    made complex), as torch computes it: both sides in one complex dtype (complex128 when a tensor is float64 or
    complex128, complex64 otherwise), numbers as 0-d tensors of it. MindSpore has no kernel for a complex tensor
    with a real one. Without a tensor it is Python's own arithmetic; with two real tensors, the plain operator."""
    left_tensor, right_tensor = isinstance(left, Tensor), isinstance(right, Tensor)
    if not left_tensor and not right_tensor:
        if isinstance(left, tuple) or isinstance(right, tuple):
            return _number_arithmetic(operator, left, right)
        return _arithmetic(operator, left, right)
    left_complex = _is_complex(left.dtype) if left_tensor else isinstance(left, (builtins.complex, tuple))
    right_complex = _is_complex(right.dtype) if right_tensor else isinstance(right, (builtins.complex, tuple))
    if not left_complex and not right_complex:
        return _arithmetic(operator, left, right)
    wide = (left_tensor and left.dtype in (ms.float64, ms.complex128)) or \
        (right_tensor and right.dtype in (ms.float64, ms.complex128))
    dtype = ms.complex128 if wide else ms.complex64
    if operator == "*":
        return _complex_product(left, right, dtype)
    return _arithmetic(operator, _complex_operand(left, dtype), _complex_operand(right, dtype))


def _complex_product(left, right, dtype):
    """``left * right`` in complex, multiplied out from the real and imaginary parts, (ac - bd) + (ad + bc)i, as
    torch's kernel computes it: MindSpore 2.10 has no gradient for a complex Mul ("For 'Mul', gradient not support
    for complex type currently": rotary embeddings through ``view_as_complex(x) * rotation`` failed at the first
    step, zspalotai-spec/cs336g-a1-basics), while ops.real, ops.imag and Complex have one. A real side has no
    imaginary part (no complex cast, which has no gradient either)."""
    part = ms.float64 if dtype == ms.complex128 else ms.float32
    a, b = _product_parts(left, part)
    c, d = _product_parts(right, part)
    real = a * c if b is None or d is None else a * c - b * d
    imag = a * d if b is None else b * c if d is None else a * d + b * c
    shape = _broadcast_shapes((real.shape, imag.shape))
    return _COMPLEX(ops.broadcast_to(real, shape), ops.broadcast_to(imag, shape))


def _product_parts(value, part):
    """(real, imag) of a product's side: a complex tensor's parts, a real tensor (imag None), a number's pair."""
    if isinstance(value, Tensor):
        if _is_complex(value.dtype):
            return ops.real(value).astype(part), ops.imag(value).astype(part)
        return value.astype(part), None
    if isinstance(value, tuple):
        return ops.full((), value[0], dtype=part), ops.full((), value[1], dtype=part)
    if isinstance(value, builtins.complex):
        return ops.full((), value.real, dtype=part), ops.full((), value.imag, dtype=part)
    return ops.full((), float(value), dtype=part), None


def _complex_operand(value, dtype):
    if isinstance(value, Tensor):
        return value if value.dtype == dtype else value.astype(dtype)
    if isinstance(value, tuple):  # a complex number as (real, imag): a graph holds no complex constant
        part = ms.float64 if dtype == ms.complex128 else ms.float32
        return ops.Complex()(ops.full((), value[0], dtype=part), ops.full((), value[1], dtype=part))
    return Tensor(builtins.complex(value), dtype)


def _parts(value):
    """A number as (real, imag) floats: a complex number's pair as the converter writes it, or a real number."""
    if isinstance(value, tuple):
        return value
    return (float(value), 0.0)


def _number_arithmetic(operator, left, right):
    """Arithmetic of numbers of which one is a complex number written as its (real, imag) pair (``1.j * 2`` with
    ``pi``: ETSformer's frequencies). PyNative gives Python's complex result, as before; in a graph, which has no
    complex constant, the pair of its parts, computed on floats (``**`` is Python's: a graph refuses it)."""
    if operator == "**" or not _in_graph():
        value = _arithmetic(operator, builtins.complex(*_parts(left)), builtins.complex(*_parts(right)))
        return value if not _in_graph() else (value.real, value.imag)
    (a, b), (c, d) = _parts(left), _parts(right)
    if operator == "+":
        return (a + c, b + d)
    if operator == "-":
        return (a - c, b - d)
    if operator == "*":
        return (a * c - b * d, a * d + b * c)
    scale = c * c + d * d
    return ((a * c + b * d) / scale, (b * c - a * d) / scale)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """torch.diag_embed / Tensor.diag_embed: ops.diag_embed, also for complex inputs (the real and imaginary parts
    embedded apart: S4's ``V @ diag_embed(W) @ V^H``) and bool ones (through int8), which its kernel refuses."""
    if _is_complex(input.dtype):
        return ops.Complex()(ops.diag_embed(ops.real(input), offset, dim1, dim2),
                             ops.diag_embed(ops.imag(input), offset, dim1, dim2))
    if input.dtype == ms.bool_:
        return ops.diag_embed(input.astype(ms.int8), offset, dim1, dim2).astype(ms.bool_)
    return ops.diag_embed(input, offset, dim1, dim2)


def nextafter(input, other):
    """torch.nextafter / Tensor.nextafter: the operands broadcast to one shape and take their common type first, as
    torch does. MindSpore 2.10's NextAfter does neither: a 0-d input against a (2, 3) other silently returns wrong
    values (the first element only), and mixed dtypes (an int64 input, a float other) raise."""
    dtype = result_type(input, other)
    input, other = _tensor(input, dtype).astype(dtype), _tensor(other, dtype).astype(dtype)
    shape = _broadcast_shapes((input.shape, other.shape))
    return ops.nextafter(ops.broadcast_to(input, shape), ops.broadcast_to(other, shape))


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """torch.addr / Tensor.addr: beta * input + alpha * outer(vec1, vec2) in the common type of the three, as torch
    gives it (an int64 input with float vectors is a float result). MindSpore 2.10's Addr silently computes another
    result for mixed dtypes and refuses a bool input; the operands are cast to the common type first."""
    dtype = _result_type((result_type(input, vec1), 1), _operand(vec2))
    return ops.addr(input.astype(dtype), vec1.astype(dtype), vec2.astype(dtype), beta=beta, alpha=alpha)


def logsumexp(input, dim, keepdim=False):
    """Tensor.logsumexp: an integer or bool receiver computed in float32, as torch promotes it (MindSpore 2.10's Exp
    and ReduceMax kernels refuse them: TypeError); a floating one is MindSpore's own method."""
    return floating(input).logsumexp(dim, keepdim)


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Tensor.repeat_interleave: a bool receiver (an attention mask repeated per head) repeated as uint8 and given
    back as bool (MindSpore 2.10's RepeatInterleave refuses bool: TypeError); other dtypes are MindSpore's own
    method."""
    x = input.astype(ms.uint8) if input.dtype == ms.bool_ else input
    out = x.repeat_interleave(repeats, dim) if output_size is None else \
        x.repeat_interleave(repeats, dim, output_size=output_size)
    return out.astype(ms.bool_) if input.dtype == ms.bool_ else out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """torch.diagonal_scatter / Tensor.diagonal_scatter: the result has the input's dtype, as torch writes ``src``
    into it. MindSpore 2.10's diagonal_scatter returns ``src``'s dtype (an int64 input with a float32 src came back
    float32, silently) and refuses bool (its diag_embed): ``src`` is cast to the input's dtype, bool computed in
    uint8."""
    x = input.astype(ms.uint8) if input.dtype == ms.bool_ else input
    out = ops.diagonal_scatter(x, src.astype(input.dtype).astype(x.dtype), offset, dim1, dim2)
    return out.astype(ms.bool_) if input.dtype == ms.bool_ else out


# ---------------------------------------------------------------------------------------------------------------
# mixed-dtype operands: the one promotion rule (torch's result_type over every tensor operand) for the element-wise
# calls whose MindSpore kernel takes one dtype for all its tensors (``the input type must be same``) or floating
# tensors only, where torch promotes an integer or bool operand (``ids.addcmul(a, b)`` with float a, b is float32).
# mindport.runtime.promotion.PROMOTED names them (the converter keeps MindSpore's own call where every tensor
# operand is floating point by construction); SCATTERED names the scatters that write ``src`` into the receiver's
# dtype.


def promoted_operands(*operands):
    """The operands of an element-wise call in torch's common type (:func:`result_type` over all of them: dimensioned
    tensors decide within a category, 0-d tensors and Python numbers only from a higher one); a tensor already of
    that type, and a Python number, is passed as it is. The type is a constant (dtypes and ranks): GRAPH_MODE
    computes it at compile time."""
    dtype = _result_types(tuple(_operand(v) for v in operands))
    return tuple(v.astype(dtype) if isinstance(v, Tensor) and v.dtype != dtype else v for v in operands)


def addcmul(input, tensor1, tensor2, value=1):
    """torch.addcmul / Tensor.addcmul: ``input + value * tensor1 * tensor2`` in the operands' common type
    (:func:`promoted_operands`; MindSpore 2.10's Addcmul refuses mixed dtypes and a bool input)."""
    return ops.addcmul(*promoted_operands(input, tensor1, tensor2), value=value)


def addcdiv(input, tensor1, tensor2, value=1):
    """torch.addcdiv / Tensor.addcdiv: ``input + value * tensor1 / tensor2`` in the operands' common type
    (:func:`promoted_operands`; MindSpore 2.10's Addcdiv refuses mixed dtypes and a bool input)."""
    return ops.addcdiv(*promoted_operands(input, tensor1, tensor2), value=value)


def ger(input, vec2):
    """torch.ger / Tensor.ger: the outer product in the operands' common type (:func:`promoted_operands`; MindSpore
    2.10's Ger refuses mixed dtypes)."""
    return ops.ger(*promoted_operands(input, vec2))


def igamma(input, other):
    """torch.igamma / Tensor.igamma in the operands' common type (:func:`promoted_operands`)."""
    return ops.igamma(*promoted_operands(input, other))


def igammac(input, other):
    """torch.igammac / Tensor.igammac in the operands' common type (:func:`promoted_operands`)."""
    return ops.igammac(*promoted_operands(input, other))


def logaddexp(input, other):
    """torch.logaddexp / Tensor.logaddexp in the operands' common type (:func:`promoted_operands`; MindSpore 2.10
    refuses an integer or bool operand)."""
    return ops.logaddexp(*promoted_operands(input, other))


def logaddexp2(input, other):
    """torch.logaddexp2 / Tensor.logaddexp2 in the operands' common type (:func:`promoted_operands`)."""
    return ops.logaddexp2(*promoted_operands(input, other))


def _scatter_into(fn, input, src, *args):
    """``fn(input, src, ...)`` with the result in ``input``'s dtype, as torch writes ``src`` into the receiver
    (a float src into an int64 receiver truncates, into a bool one is ``!= 0``); MindSpore 2.10's scatter kernels
    take one dtype and no bool: bool computed in uint8."""
    x = input.astype(ms.uint8) if input.dtype == ms.bool_ else input
    out = fn(x, src.astype(input.dtype).astype(x.dtype), *args)
    return out.astype(ms.bool_) if input.dtype == ms.bool_ else out


def select_scatter(input, src, axis, index):
    """torch.select_scatter / Tensor.select_scatter: ``src`` written into ``input``'s dtype (:func:`_scatter_into`)."""
    return _scatter_into(ops.select_scatter, input, src, axis, index)


def slice_scatter(input, src, axis=0, start=None, end=None, step=1):
    """torch.slice_scatter / Tensor.slice_scatter: ``src`` written into ``input``'s dtype (:func:`_scatter_into`)."""
    return _scatter_into(ops.slice_scatter, input, src, axis, start, end, step)


# ---------------------------------------------------------------------------------------------------------------
# integer and bool receivers of the functions whose MindSpore 2.10 CPU kernel takes floating tensors only, where torch
# computes on them without promoting (mindport.runtime.promotion.INT_RECEIVERS; the converter keeps MindSpore's own
# ops.<name> where the receiver is floating point by construction)

_EXACT = (ms.bool_, ms.uint8, ms.int8, ms.int16, ms.int32, ms.int64)


def _exact(input) -> bool:
    """An integer or bool tensor: no NaN, no infinity, no fraction (a constant in a graph: the dtype)."""
    return input.dtype in _EXACT


def isinf(input):
    """torch.isinf / Tensor.isinf: False everywhere for an integer or bool tensor (MindSpore's IsInf refuses them)."""
    return ops.zeros_like(input, dtype=ms.bool_) if _exact(input) else ops.isinf(input)


def isposinf(input):
    """torch.isposinf / Tensor.isposinf: False everywhere for an integer or bool tensor (MindSpore's IsInf refuses
    them)."""
    return ops.zeros_like(input, dtype=ms.bool_) if _exact(input) else ops.isposinf(input)


def isneginf(input):
    """torch.isneginf / Tensor.isneginf: False everywhere for an integer or bool tensor (MindSpore's IsInf refuses
    them)."""
    return ops.zeros_like(input, dtype=ms.bool_) if _exact(input) else ops.isneginf(input)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """torch.nan_to_num / Tensor.nan_to_num: an integer or bool tensor has nothing to replace, a copy of it as torch
    gives (MindSpore's NanToNum refuses them); a complex one part by part."""
    if _exact(input):
        return ops.deepcopy(input)
    return by_parts(ops.nan_to_num, input, nan, posinf, neginf)


def ceil(input):
    """torch.ceil / Tensor.ceil: an integer tensor is its own ceiling, a copy of it as torch gives (MindSpore's Ceil
    refuses integers; torch refuses bool as MindSpore does)."""
    return ops.deepcopy(input) if _exact(input) and input.dtype != ms.bool_ else ops.ceil(input)


def floor(input):
    """torch.floor / Tensor.floor: an integer tensor is its own floor, a copy of it as torch gives (MindSpore's Floor
    refuses integers; torch refuses bool as MindSpore does)."""
    return ops.deepcopy(input) if _exact(input) and input.dtype != ms.bool_ else ops.floor(input)


def div(input, other, *, rounding_mode=None):
    """torch.div / torch.divide / Tensor.div / Tensor.divide. MindSpore 2.10 on the CPU, under the synchronous launch
    that :mod:`mindport.runtime.training` sets (``launch_blocking``): Tensor.div/mint.div with a Python-number divisor
    and a ``rounding_mode`` stop ("KernelMod Init Failed: FloorDiv"; 'trunc': "Trunc should have 1 outputs, but got
    2"), and so does ops.div(int32 tensor, number, rounding_mode='floor'). 'floor' goes to the FloorDiv primitive
    (ops.floor_divide, torch's floor division), which runs in both launches; 'trunc' and None to ops.div.
    Before/after: ``x.div(2, rounding_mode='floor')`` -> ``mp_math.div(x, other=2, rounding_mode='floor')``."""
    if rounding_mode == "floor":
        return ops.floor_divide(input, other)
    return ops.div(input, other, rounding_mode=rounding_mode)
