"""Comparisons as constants of differentiation while a converted training step differentiates, as torch's bool
results are.

A comparison's result has no gradient in torch (a bool tensor never requires grad). MindSpore 2.10's PyNative
autodiff records it all the same: a bool tensor computed from a differentiated tensor (``thr = temp > q``, ``temp``
a function of the parameters) and read by two or more operations (``mask * log_prob`` and ``mask.sum(1)``; a
SupCon loss's masks) receives one cotangent per reader, each cast to bool, and their sum fails inside the
differentiation: "For primitive[Add], the input argument[x] must be a type of {Tensor[BFloat16], ...}, but got
Tensor[Bool]" (measured; one reader passes). Casting the mask to float first, or ``ops.stop_gradient`` on it, passes.

``constant_comparisons()`` is a context manager that ``mindport.runtime.training.value_and_grad`` (the converted
training step's differentiation) enters around the forward function it differentiates, and only there: for that
time the Tensor comparison operators (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``), the Tensor comparison methods
and the ``mindspore.ops`` comparison functions (``gt``/``greater``, ``ge``, ``lt``, ``le``, ``eq``/``equal``,
``ne``, ``isnan``, ``isinf``, ``isfinite``, ``isclose``) return ``ops.stop_gradient`` of a bool tensor result: the
same values, no path back. Leaving the outermost one puts MindSpore's own attributes back, so nothing outside the
forward function (user code, evaluation, other libraries) sees a change. Exact, as torch: the derivative of a
comparison is zero where it exists. Not covered: ``mint``'s functions, a comparison function bound by name before
the step (``from mindspore.ops import gt``), a compiled graph (it compiles MindSpore's own), and a step written
with ``mindspore.value_and_grad`` directly (the converter's simplest training-loop form; its forward does not pass
through this runtime).
"""
from __future__ import annotations

import contextlib
import functools

import mindspore
from mindspore import Tensor, ops

_stop_gradient = ops.stop_gradient

_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
_METHODS = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
            "isnan", "isinf", "isfinite", "isclose")
_FUNCTIONS = ("gt", "greater", "ge", "greater_equal", "lt", "less", "le", "less_equal", "eq", "equal", "ne",
              "not_equal", "isnan", "isinf", "isfinite", "isclose")

_MISSING = object()
_DEPTH = [0]  # nested constant_comparisons() (a step differentiated inside another): install once, restore once
_SAVED: list = []  # (owner, name, the owner's own attribute or _MISSING) while installed


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


def _install() -> None:
    for owner, names in ((Tensor, _DUNDERS + _METHODS), (ops, _FUNCTIONS)):
        for name in names:
            current = getattr(owner, name, None)
            if not callable(current) or getattr(current, "_mindport_bool_grads", False):
                continue
            _SAVED.append((owner, name, owner.__dict__.get(name, _MISSING)))
            setattr(owner, name, _constant(current))


def _restore() -> None:
    while _SAVED:
        owner, name, own = _SAVED.pop()
        if own is _MISSING:
            delattr(owner, name)  # inherited (TensorPy's method): the class had no attribute of its own
        else:
            setattr(owner, name, own)


@contextlib.contextmanager
def constant_comparisons():
    """Within: comparisons return bool tensors that are constants of differentiation; after: MindSpore's own."""
    if _DEPTH[0] == 0:
        _install()
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1
        if _DEPTH[0] == 0:
            _restore()
