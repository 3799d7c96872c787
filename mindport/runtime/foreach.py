"""torch's ``_foreach_*`` operations (one operation over a list of tensors, as hand-written optimizers use them), for
converted code: ``torch._foreach_mul_(exp_avgs, beta1)`` -> ``mp_foreach.mul_(exp_avgs, beta1)``.

The second operand is a scalar, a tensor, or a list (one scalar or tensor per tensor), as in torch. The out-of-place
forms return a new list; the in-place forms (``add_`` ...) write each result into its tensor, the way
:mod:`mindport.runtime.inplace` does (the tensor keeps its identity, dtype and, in PyNative, its autograd history),
and return None like torch. Each function is the target of a mapping entry (``mindport/mappings/data/foreach.toml``).
"""
from __future__ import annotations

from mindspore import ops

from mindport.runtime.inplace import _store


def _operands(tensors, other):
    """One operand per tensor: ``other`` itself, or its items when it is a list (same length)."""
    if isinstance(other, (list, tuple)):
        if len(other) != len(tensors):
            raise ValueError(f"_foreach: {len(tensors)} tensors but {len(other)} operands")
        return list(other)
    return [other] * len(tensors)


def _unary(op, name):
    def outplace(self):
        return [op(t) for t in self]

    def inplace(self):
        for t in self:
            _store(t, op(t.copy()))

    outplace.__name__, inplace.__name__ = name, name + "_"
    outplace.__doc__ = f"torch._foreach_{name}: ``{name}`` of each tensor, as a new list."
    inplace.__doc__ = f"torch._foreach_{name}_: ``{name}`` of each tensor, written into it."
    return outplace, inplace


def _binary(op, name):
    def outplace(self, other):
        return [op(t, o) for t, o in zip(self, _operands(self, other))]

    def inplace(self, other):
        for t, o in zip(self, _operands(self, other)):
            _store(t, op(t.copy(), o))

    outplace.__name__, inplace.__name__ = name, name + "_"
    outplace.__doc__ = f"torch._foreach_{name}(self, other): ``{name}`` of each tensor and its operand (a scalar, a " \
                       "tensor, or one per tensor in a list), as a new list."
    inplace.__doc__ = f"torch._foreach_{name}_(self, other): ``{name}`` of each tensor and its operand, written into it."
    return outplace, inplace


neg, neg_ = _unary(ops.neg, "neg")
sqrt, sqrt_ = _unary(ops.sqrt, "sqrt")
reciprocal, reciprocal_ = _unary(ops.reciprocal, "reciprocal")
abs, abs_ = _unary(ops.abs, "abs")  # noqa: A001 - torch's name
exp, exp_ = _unary(ops.exp, "exp")
sign, sign_ = _unary(ops.sign, "sign")
mul, mul_ = _binary(ops.mul, "mul")
div, div_ = _binary(ops.div, "div")
maximum, maximum_ = _binary(ops.maximum, "maximum")
minimum, minimum_ = _binary(ops.minimum, "minimum")
clamp_min, clamp_min_ = _binary(lambda t, v: ops.clamp(t, min=v), "clamp_min")
clamp_max, clamp_max_ = _binary(lambda t, v: ops.clamp(t, max=v), "clamp_max")
pow, pow_ = _binary(ops.pow, "pow")  # noqa: A001 - torch's name


def add(self, other, *, alpha=1):
    """torch._foreach_add(self, other, alpha=1): ``t + alpha * o`` for each tensor, as a new list."""
    return [t + o * alpha if alpha != 1 else t + o for t, o in zip(self, _operands(self, other))]


def add_(self, other, *, alpha=1):
    """torch._foreach_add_(self, other, alpha=1): ``t + alpha * o`` written into each tensor."""
    for t, o in zip(self, _operands(self, other)):
        _store(t, t.copy() + (o * alpha if alpha != 1 else o))


def sub(self, other, *, alpha=1):
    """torch._foreach_sub(self, other, alpha=1): ``t - alpha * o`` for each tensor, as a new list."""
    return [t - (o * alpha if alpha != 1 else o) for t, o in zip(self, _operands(self, other))]


def sub_(self, other, *, alpha=1):
    """torch._foreach_sub_(self, other, alpha=1): ``t - alpha * o`` written into each tensor."""
    for t, o in zip(self, _operands(self, other)):
        _store(t, t.copy() - (o * alpha if alpha != 1 else o))


def _addc(op):
    def outplace(self, tensor1, tensor2, value=1):
        return [t + v * op(a, b) for t, a, b, v in zip(self, tensor1, tensor2, _operands(self, value))]

    def inplace(self, tensor1, tensor2, value=1):
        for t, a, b, v in zip(self, tensor1, tensor2, _operands(self, value)):
            _store(t, t.copy() + v * op(a, b))
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
    for t, e, w in zip(self, tensors1, _operands(self, weight)):
        _store(t, t.copy() + w * (e - t.copy()))


def zero_(self):
    """torch._foreach_zero_(self): zeros written into each tensor."""
    for t in self:
        _store(t, ops.zeros_like(t))


def copy_(self, src, non_blocking=False):
    """torch._foreach_copy_(self, src): each ``src`` tensor's values written into its tensor."""
    for t, s in zip(self, src):
        _store(t, s)
