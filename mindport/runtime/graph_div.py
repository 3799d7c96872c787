"""torch's ``/`` of integer tensors (float32), in a static graph.

torch divides integer (and bool) tensors as floats of the default dtype: ``torch.arange(16) / 15`` is float32, and so
are ``a / b`` of two int64 tensors and ``15 / a``; an integer tensor divided by a float64 tensor is float64.

MindSpore 2.10 in PyNative gives float32 too, and so does a graph for a tensor computed at run time. But a graph folds
an integer tensor that is a compile-time constant (``ops.arange(half_dim)`` with ``half_dim`` a number, as in
encodec's ``create_sin_embedding``), and its folding of ``/`` (``RealDiv``/``Divs``) is numpy's ``true_divide``:
float64 ("For primitive[MatMulExt], the input type must be same: w float32, x float64" once the embedding reached a
layer: trials entry encodec/transformer; pure MindSpore: ``ops.arange(16) / 15`` and ``a / a`` float64 in a graph,
float32 in PyNative; ``a * 0.5``, ``a ** 0.5``, ``15 / a`` and a float32 cast first stay float32).

Importing this module (``mindport.runtime._graph`` does, so every runtime module loads it) re-registers, once, the
graph's ``/`` (``mindspore.ops.composite.multitype_ops.div_impl``'s ``div``) for a tensor with a tensor and a tensor
with a number: an integer or bool operand is cast to the other tensor's floating dtype (float32 when there is none)
before MindSpore's own division (numpy folds float32 / int64 to float64 too); floating operands go to MindSpore's
function unchanged. The
dtype test is made while the graph compiles (a dtype is a constant there). PyNative does not use these tables.

Not covered: ``ops.div``/``torch.div`` called as functions (the table's targets), and a converted file that imports
no mindport runtime module.
"""
from __future__ import annotations

from mindspore.common import dtype as _mstype
from mindspore.ops import functional as _F
from mindspore.ops.auto_generate import div_op as _div_op
from mindspore.ops.auto_generate import divs_op as _divs_op
from mindspore.ops.composite.multitype_ops import div_impl as _div_impl

_INSTALLED = getattr(_div_impl, "_mindport_int_div", False)
# floating and complex dtypes: divided as they are (an integer or bool operand takes the other's dtype)
_FLOATS = (_mstype.float16, _mstype.bfloat16, _mstype.float32, _mstype.float64, _mstype.complex64, _mstype.complex128)


def _tensor_div_tensor(x, y):
    """``x / y`` of two tensors: an integer or bool operand divided as floats (the other's floating dtype, float32
    when both are integers)."""
    if x.dtype not in _FLOATS:
        x = _F.cast(x, y.dtype if y.dtype in _FLOATS else _mstype.float32)
    if y.dtype not in _FLOATS:
        y = _F.cast(y, x.dtype)
    return _div_op(x, y)


def _tensor_div_scalar(x, y):
    """``x / y``, ``y`` a number: an integer or bool ``x`` divided as float32."""
    if x.dtype not in _FLOATS:
        x = _F.cast(x, _mstype.float32)
    return _divs_op(x, y)


if not _INSTALLED:
    # a later registration of the same types replaces MindSpore's (as graph_bool's, measured on 2.10)
    _div_impl.div.register("Tensor", "Tensor")(_tensor_div_tensor)
    _div_impl.div.register("Tensor", "Number")(_tensor_div_scalar)
    _div_impl._mindport_int_div = True
