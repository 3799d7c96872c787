"""torch's ``+`` and ``+=`` on bool tensors, in a static graph.

torch adds two bool tensors as their logical or, and keeps the dtype bool: ``pad_mask + future_mask`` (a GPT-2's
attention mask, both operands bool) is the union of the two masks. Enumerated on torch 2.13 (``a``, ``b`` bool
tensors):

* ``a + b``, ``a + True``, ``True + a``, ``a += b``, ``a += True``: bool, the logical or (``a += b`` in place);
* ``a + 1`` int64, ``a + 1.5`` float32 (the bool read as 0/1); ``a * b`` bool (logical and), ``a / b`` float32;
  ``a & b``, ``a | b``, ``a ^ b`` and comparisons bool;
* refused by torch: ``a - b``, ``a - 1``, ``-a``, ``a // b``, ``a % b``, ``a ** b`` (no converted line does these).

MindSpore 2.10 in PyNative gives torch's results for all of these. In GRAPH_MODE, every one of them compiles and
matches except ``+``: ``a + b``, ``a + True``, ``True + a``, ``a += b`` and ``a += True`` fail with "For primitive[Add],
the input argument[x] must be a type of {Tensor[BFloat16], ...}, but got Tensor[Bool]" (loud; measured).
``a + 1`` and ``a + 1.5`` compile and match.

Importing this module (``mindport.runtime._graph`` does, so every runtime module loads it) re-registers, once, the
graph's ``+`` and ``+=`` (``mindspore.ops.composite.multitype_ops.add_impl``'s ``add`` and ``augassign_add``) for a
tensor with a tensor and a tensor with a number: when both operands are bool (a Python ``bool`` for the number), the
result is ``logical_or``, and ``+=`` writes it into the left tensor in place (``InplaceCopy``: a name bound to the
same tensor sees the update, as in torch). Every other dtype goes to MindSpore's own function, unchanged. The
dtype test is made while the graph compiles (a dtype is a constant there), so the compiled graph holds only the
branch taken. PyNative does not use these tables (measured: the same results with and without this module).

Not covered: a converted file that imports no mindport runtime module does not load this, and its bool ``+`` stays
MindSpore's (loud, as before). A graph also simplifies ``a * 1`` of a bool ``a`` to ``a`` itself (dtype bool where
torch gives int64; the values are equal); a ``+`` of two such results is then refused by MindSpore's Add after this
module's dtype test chose it (loud, not a wrong sum).
"""
from __future__ import annotations

from mindspore.common import dtype as _mstype
from mindspore.ops import functional as _F
from mindspore.ops.auto_generate.gen_ops_prim import InplaceAddExt as _InplaceAddExt
from mindspore.ops.auto_generate.gen_ops_prim import InplaceAddsExt as _InplaceAddsExt
from mindspore.ops.auto_generate.gen_ops_prim import InplaceCopy as _InplaceCopy
from mindspore.ops.composite.multitype_ops import add_impl as _add_impl

_INSTALLED = getattr(_add_impl, "_mindport_bool_add", False)


def _tensor_add_tensor(x, y):
    """``x + y`` of two tensors: the logical or when both are bool, else MindSpore's ``add``."""
    if x.dtype == _mstype.bool_ and y.dtype == _mstype.bool_:
        return _F.logical_or(x, y)
    return _F.add(x, y)


def _tensor_add_scalar(x, y):
    """``x + y``, ``y`` a number: the logical or when ``x`` is bool and ``y`` a Python bool, else MindSpore's."""
    if x.dtype == _mstype.bool_ and isinstance(y, bool):
        return _F.logical_or(x, _F.scalar_to_tensor(y, _mstype.bool_))
    return _F.add(x, y)


def _scalar_add_tensor(x, y):
    """``x + y``, ``x`` a number: the logical or when ``y`` is bool and ``x`` a Python bool, else MindSpore's."""
    if y.dtype == _mstype.bool_ and isinstance(x, bool):
        return _F.logical_or(_F.scalar_to_tensor(x, _mstype.bool_), y)
    return _F.add(x, y)


def _tensor_add_tensor_augassign(x, y):
    """``x += y`` of two tensors: the logical or written into ``x`` when both are bool, else MindSpore's in-place
    add."""
    if x.dtype == _mstype.bool_ and y.dtype == _mstype.bool_:
        return _InplaceCopy()(x, _F.logical_or(x, y))
    return _InplaceAddExt()(x, y)


def _tensor_add_scalar_augassign(x, y):
    """``x += y``, ``y`` a number: the logical or written into ``x`` when ``x`` is bool and ``y`` a Python bool,
    else MindSpore's in-place add."""
    if x.dtype == _mstype.bool_ and isinstance(y, bool):
        return _InplaceCopy()(x, _F.logical_or(x, _F.scalar_to_tensor(y, _mstype.bool_)))
    return _InplaceAddsExt()(x, y)


if not _INSTALLED:
    # a later registration of the same types replaces MindSpore's (measured on 2.10)
    _add_impl.add.register("Tensor", "Tensor")(_tensor_add_tensor)
    _add_impl.add.register("Tensor", "Number")(_tensor_add_scalar)
    _add_impl.add.register("Number", "Tensor")(_scalar_add_tensor)
    _add_impl.augassign_add.register("Tensor", "Tensor")(_tensor_add_tensor_augassign)
    _add_impl.augassign_add.register("Tensor", "Number")(_tensor_add_scalar_augassign)
    _add_impl._mindport_bool_add = True
