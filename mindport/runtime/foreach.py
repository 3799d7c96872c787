"""torch's ``_foreach_*`` operations (one operation over a list of tensors, as hand-written optimizers use them), for
converted code: ``torch._foreach_mul_(exp_avgs, beta1)`` -> ``mp_foreach.mul_(exp_avgs, beta1)``.

The second operand is a scalar, a tensor, or a list (one scalar or tensor per tensor), as in torch. The out-of-place
forms return a new list; the in-place forms (``add_`` ...) write each result into its tensor, the way
:mod:`mindport.runtime.inplace` does (the tensor keeps its identity, dtype and, in PyNative, its autograd history),
and return the list itself like torch (2.13; older torch returned None). Each function is the target of a mapping entry (``mindport/mappings/data/foreach.toml``).

In a static graph (``GRAPH_MODE``, ``ms.jit``; measured on MindSpore 2.10, CPU) a list holds the values its tensors
had when it was built: an in-place update of a plain tensor reached through the list is lost to the next read through
the list, so ``_foreach_mul_(xs, 2); _foreach_add_(xs, 1)`` would give ``x + 1``, silently. Parameters are updated
(``ops.assign`` on a Parameter is ordered with every later read), which is what an optimizer's state is. So inside a
graph the in-place forms take lists of Parameters only and raise mindport's error for other tensors: there, use the
out-of-place form and the list it returns (``xs = mp_foreach.mul(xs, 2)``).
"""
from __future__ import annotations

import mindspore as ms
from mindspore import ops

from mindport.runtime import math as mp_math
from mindport.runtime._graph import in_graph as _in_graph
from mindport.runtime.inplace import _store


def _operands(tensors, other):
    """One operand per tensor: ``other`` itself, or its items when it is a list (same length)."""
    if isinstance(other, (list, tuple)):
        if len(other) != len(tensors):
            raise ValueError(f"_foreach: {len(tensors)} tensors but {len(other)} operands")
        return list(other)
    return [other] * len(tensors)


def _updatable(tensors):
    """Inside a graph, raise unless every tensor is a Parameter (module docstring); nothing to do in PyNative."""
    if _in_graph():
        for t in tensors:
            if not isinstance(t, ms.Parameter):  # noqa: TRY004 - mindport's graph error, as in inplace.py
                raise RuntimeError("mindport: torch._foreach_*_ can't update a tensor reached through a list inside "
                                   "construct or @jit (the graph's list keeps the old values, so later reads would "
                                   "be wrong silently); only Parameters are updated there. Use the out-of-place "
                                   "form and its result: xs = torch._foreach_mul(xs, ...)")


def _unary(op, name):
    def outplace(self):
        return [op(t) for t in self]

    def inplace(self):
        _updatable(self)
        for t in self:
            _store(t, op(t.copy()))
        return self

    outplace.__name__, inplace.__name__ = name, name + "_"
    outplace.__doc__ = f"torch._foreach_{name}: ``{name}`` of each tensor, as a new list."
    inplace.__doc__ = f"torch._foreach_{name}_: ``{name}`` of each tensor, written into it."
    return outplace, inplace


def _binary(op, name):
    def outplace(self, other):
        return [op(t, o) for t, o in zip(self, _operands(self, other))]

    def inplace(self, other):
        _updatable(self)
        for t, o in zip(self, _operands(self, other)):
            _store(t, op(t.copy(), o))
        return self

    outplace.__name__, inplace.__name__ = name, name + "_"
    outplace.__doc__ = f"torch._foreach_{name}(self, other): ``{name}`` of each tensor and its operand (a scalar, a " \
                       "tensor, or one per tensor in a list), as a new list."
    inplace.__doc__ = f"torch._foreach_{name}_(self, other): ``{name}`` of each tensor and its operand, written into it."
    return outplace, inplace


neg, neg_ = _unary(ops.neg, "neg")
sqrt, sqrt_ = _unary(ops.sqrt, "sqrt")
reciprocal, reciprocal_ = _unary(ops.reciprocal, "reciprocal")
abs, abs_ = _unary(mp_math.abs, "abs")  # noqa: A001 - torch's name; a complex modulus is real
exp, exp_ = _unary(ops.exp, "exp")
sign, sign_ = _unary(ops.sign, "sign")
mul, mul_ = _binary(ops.mul, "mul")
div, div_ = _binary(ops.div, "div")
maximum, maximum_ = _binary(ops.maximum, "maximum")
minimum, minimum_ = _binary(ops.minimum, "minimum")


def _clamp_min(input, value):
    return ops.clamp(input, min=value)


def _clamp_max(input, value):
    return ops.clamp(input, max=value)


clamp_min, clamp_min_ = _binary(_clamp_min, "clamp_min")  # a named function: a graph can't parse a lambda passed
clamp_max, clamp_max_ = _binary(_clamp_max, "clamp_max")  # as an argument ("Parse Lambda Function Fail")
pow, pow_ = _binary(ops.pow, "pow")  # noqa: A001 - torch's name


def add(self, other, *, alpha=1):
    """torch._foreach_add(self, other, alpha=1): ``t + alpha * o`` for each tensor, as a new list."""
    return [t + o * alpha if alpha != 1 else t + o for t, o in zip(self, _operands(self, other))]


def add_(self, other, *, alpha=1):
    """torch._foreach_add_(self, other, alpha=1): ``t + alpha * o`` written into each tensor."""
    _updatable(self)
    for t, o in zip(self, _operands(self, other)):
        _store(t, t.copy() + (o * alpha if alpha != 1 else o))
    return self


def sub(self, other, *, alpha=1):
    """torch._foreach_sub(self, other, alpha=1): ``t - alpha * o`` for each tensor, as a new list."""
    return [t - (o * alpha if alpha != 1 else o) for t, o in zip(self, _operands(self, other))]


def sub_(self, other, *, alpha=1):
    """torch._foreach_sub_(self, other, alpha=1): ``t - alpha * o`` written into each tensor."""
    _updatable(self)
    for t, o in zip(self, _operands(self, other)):
        _store(t, t.copy() - (o * alpha if alpha != 1 else o))
    return self


def _addc(op):
    """``t + value * op(t1, t2)``; a Python float value on integer tensors truncated as torch does
    (runtime.math.integral_scalar)."""
    def outplace(self, tensor1, tensor2, value=1):
        return [t + mp_math.integral_scalar(t, v) * op(a, b)
                for t, a, b, v in zip(self, tensor1, tensor2, _operands(self, value))]

    def inplace(self, tensor1, tensor2, value=1):
        _updatable(self)
        for t, a, b, v in zip(self, tensor1, tensor2, _operands(self, value)):
            _store(t, t.copy() + mp_math.integral_scalar(t, v) * op(a, b))
        return self
    return outplace, inplace


addcmul, addcmul_ = _addc(ops.mul)
addcdiv, addcdiv_ = _addc(ops.div)
addcmul.__doc__ = "torch._foreach_addcmul(self, tensor1, tensor2, value=1): ``t + value * t1 * t2``, as a new list."
addcmul_.__doc__ = "torch._foreach_addcmul_: ``t + value * t1 * t2`` written into each tensor."
addcdiv.__doc__ = "torch._foreach_addcdiv(self, tensor1, tensor2, value=1): ``t + value * t1 / t2``, as a new list."
addcdiv_.__doc__ = "torch._foreach_addcdiv_: ``t + value * t1 / t2`` written into each tensor."


def lerp(self, tensors1, weight):
    """torch._foreach_lerp(self, tensors1, weight): ``t + weight * (e - t)``, as a new list."""
    return [t + w * (e - t) for t, e, w in zip(self, tensors1, _operands(self, weight))]


def lerp_(self, tensors1, weight):
    """torch._foreach_lerp_(self, tensors1, weight): ``t + weight * (e - t)`` written into each tensor."""
    _updatable(self)
    for t, e, w in zip(self, tensors1, _operands(self, weight)):
        _store(t, t.copy() + w * (e - t.copy()))
    return self


def zero_(self):
    """torch._foreach_zero_(self): zeros written into each tensor."""
    _updatable(self)
    for t in self:
        _store(t, ops.zeros_like(t))
    return self


def copy_(self, src, non_blocking=False):
    """torch._foreach_copy_(self, src): each ``src`` tensor's values written into its tensor."""
    _updatable(self)
    for t, s in zip(self, src):
        _store(t, s)
    return self
