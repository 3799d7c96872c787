"""Comparisons as constants of differentiation (PyNative), as torch's bool results are.

A comparison's result has no gradient in torch (a bool tensor never requires grad). MindSpore 2.10's PyNative
autodiff records it all the same: a bool tensor computed from a differentiated tensor (``thr = temp > q``, ``temp``
a function of the parameters) and read by two or more operations (``mask * log_prob`` and ``mask.sum(1)``; a
SupCon loss's masks) receives one cotangent per reader, each cast to bool, and their sum fails inside the
differentiation: "For primitive[Add], the input argument[x] must be a type of {Tensor[BFloat16], ...}, but got
Tensor[Bool]" (measured; one reader passes). Casting the mask to float first, or ``ops.stop_gradient`` on it, passes.

Importing this module (``mindport.runtime._graph`` does, so every runtime module loads it) wraps, once, the
Tensor comparison operators (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``), the Tensor comparison methods and the
``mindspore.ops`` comparison functions (``gt``/``greater``, ``ge``, ``lt``, ``le``, ``eq``/``equal``, ``ne``,
``isnan``, ``isinf``, ``isfinite``, ``isclose``) so that a bool tensor result is ``ops.stop_gradient`` of itself:
the same values, no path back. Exact, as torch: the derivative of a comparison is zero where it exists. A compiled
graph does not call these Python wrappers (it compiles MindSpore's own), and ``mint``'s functions are not wrapped.
"""
from __future__ import annotations

import functools

import mindspore
from mindspore import Tensor, ops

_stop_gradient = ops.stop_gradient
_INSTALLED = getattr(Tensor.__gt__, "_mindport_bool_grads", False)

_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
_METHODS = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
            "isnan", "isinf", "isfinite", "isclose")
_FUNCTIONS = ("gt", "greater", "ge", "greater_equal", "lt", "less", "le", "less_equal", "eq", "equal", "ne",
              "not_equal", "isnan", "isinf", "isfinite", "isclose")


def _constant(function):
    """``function`` whose bool tensor result is a constant of differentiation (every other result unchanged)."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        result = function(*args, **kwargs)
        if isinstance(result, Tensor) and result.dtype == mindspore.bool_:
            return _stop_gradient(result)
        return result

    wrapper._mindport_bool_grads = True
    return wrapper


if not _INSTALLED:
    for _name in _DUNDERS + _METHODS:
        _own = Tensor.__dict__.get(_name)
        if _own is None:
            _own = getattr(Tensor, _name, None)
        if callable(_own):
            setattr(Tensor, _name, _constant(_own))
    for _name in _FUNCTIONS:
        _own = getattr(ops, _name, None)
        if callable(_own) and not getattr(_own, "_mindport_bool_grads", False):
            setattr(ops, _name, _constant(_own))
