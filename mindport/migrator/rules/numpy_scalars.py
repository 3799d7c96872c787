"""The converter rule NumpyScalarTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/numpy_scalars.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule

_INTS = {"int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "long", "intc", "intp",
         "int_", "longlong"}
_FLOATS = {"float", "float16", "float32", "float64", "double", "single", "half", "float_", "longdouble"}


class NumpyScalarTransform(GraphMethodRule):
    """In a model's methods, ``np.f(...).astype(T).item()`` (a numpy function's result turned into a Python number)
    -> ``int(np.f(...))`` for an integer ``T`` (``'int'``, ``np.int64``, ``int``), ``float(np.f(...))`` for a float
    one.

    Informer's ProbAttention computes its sample counts from the sequence lengths so:
    ``U_part = self.factor * np.ceil(np.log(L_K)).astype('int').item()``. MindSpore's static graph (GRAPH_MODE)
    computes a numpy function of Python numbers (a shape's sizes) while it compiles and gives a scalar of its own,
    which has neither ``astype`` nor ``item`` ("AttributeError: 'Float' object has no attribute 'astype'", measured
    on 2.10); ``int(...)`` of that scalar compiles and gives the same size (measured). In PyNative ``int(x)`` of a
    numpy scalar or one-element array is ``x.astype(int).item()``: the number truncated toward zero, as numpy's
    ``astype`` casts. Only a call resolved to ``numpy`` with ``.item()`` after it (one element: a number, never an
    array); other uses are left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import numpy as np
                import torch.nn as nn


                class ProbAttention(nn.Module):
                    def __init__(self, factor=5):
                        super().__init__()
                        self.factor = factor

                    def forward(self, q):
                        u = self.factor * np.ceil(np.log(q.shape[1])).astype('int').item()
                        return q[:, :u]
            """,
            after="""
                import numpy as np
                from mindspore import nn


                class ProbAttention(nn.Cell):
                    def __init__(self, factor=5):
                        super().__init__()
                        self.factor = factor

                    def construct(self, q):
                        u = self.factor * int(np.ceil(np.log(q.shape[1])))
                        return q[:, :u]
            """,
            note="A numpy function of a size made a Python number the way a static graph compiles.",
        ),
    )

    def leave_Call(self, original_node, updated_node):
        if not self.compiled or updated_node.args:
            return updated_node
        item = updated_node.func
        if not (isinstance(item, cst.Attribute) and item.attr.value == "item"):
            return updated_node
        astype = item.value
        if not (isinstance(astype, cst.Call) and isinstance(astype.func, cst.Attribute)
                and astype.func.attr.value == "astype" and len(astype.args) == 1
                and astype.args[0].keyword is None and not astype.args[0].star):
            return updated_node
        value = astype.func.value
        if not isinstance(value, cst.Call):
            return updated_node
        qual = self.scope.resolve(value.func) or ""
        if not qual.startswith("numpy."):
            return updated_node
        kind = self._kind(astype.args[0].value)
        if kind is None:
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Call(func=cst.Name(kind), args=[cst.Arg(value)], lpar=updated_node.lpar, rpar=updated_node.rpar)

    def _kind(self, dtype) -> "str | None":
        if isinstance(dtype, cst.SimpleString):
            name = dtype.evaluated_value
        elif isinstance(dtype, cst.Name) and dtype.value in ("int", "float"):
            name = dtype.value
        else:
            qual = self.scope.resolve(dtype) or ""
            name = qual[len("numpy."):] if qual.startswith("numpy.") else ""
        if name in _INTS:
            return "int"
        if name in _FLOATS:
            return "float"
        return None
