"""The converter rule ComprehensionForsTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/comprehension_fors.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, GraphMethodRule

_RUNTIME = "mindport.runtime.graph_safe"


class ComprehensionForsTransform(GraphMethodRule):
    """In a model's methods and a module's functions, a list comprehension or generator expression with several
    ``for`` clauses is written as nested one-``for`` comprehensions joined by ``mp_graph_safe.joined``: ``[f(a, b)
    for a in xs for b in ys]`` is ``mp_graph_safe.joined([[f(a, b) for b in ys] for a in xs])`` (``sum(parts, [])``
    in a graph, one list extended in PyNative).

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) takes one ``for`` per comprehension ("The 'generators'
    supports 1 'comprehension' in ListComp/GeneratorExp, but got 2 comprehensions"), and compiles the nested form,
    whose items come in the same order (each ``if`` stays with its own ``for``). A generator expression becomes the
    list, which the call that consumed it (``tuple(...)``, ``torch.cat(...)``) reads the same. Only in the methods a
    graph compiles (a model class's, not ``__init__``) and a module's functions, which a graph compiles with every
    method that calls them from any file (VITS' ``commons.convert_pad_shape``: ``[item for sublist in l for item in
    sublist]``, called by its attention layers' ``F.pad``, failed GRAPH_MODE).
    """

    MODULE_FUNCTIONS = True

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Pairs(nn.Module):
                    def forward(self, xs, ys):
                        prods = [a * b for a in xs for b in ys if b is not None]
                        return torch.cat(tuple(a + b for a in xs if a is not None for b in ys), dim=0), prods
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor
                from mindport.runtime import graph_safe as mp_graph_safe


                class Pairs(nn.Cell):
                    def construct(self, xs, ys):
                        prods = mp_graph_safe.joined([[a * b for b in ys if b is not None] for a in xs])
                        return ops.cat(mp_tensor.promoted(tuple(mp_graph_safe.joined([[a + b for b in ys] for a in xs if a is not None]))), axis=0), prods
            """,
            note="Each `if` stays with its `for`; the items come in the same order.",
        ),
        Example(
            before="""
                import torch.nn.functional as F


                def convert_pad_shape(pad_shape):
                    return [item for sublist in pad_shape[::-1] for item in sublist]


                def padded(x, pad_shape):
                    return F.pad(x, convert_pad_shape(pad_shape))
            """,
            after="""
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import graph_safe as mp_graph_safe


                def convert_pad_shape(pad_shape):
                    return mp_graph_safe.joined([[item for item in sublist] for sublist in pad_shape[::-1]])


                def padded(x, pad_shape):
                    return mp_F.pad(x, convert_pad_shape(pad_shape))
            """,
            note="A module's function: a graph compiles it with every model method that calls it, from any file.",
        ),
        Example(
            before="""
                def grid(n):
                    return [(i, j) for i in range(n) for j in range(n)]
            """,
            note="A file that imports no torch: no model calls its functions, left as written.",
        ),
    )

    def leave_ListComp(self, original_node, updated_node):
        return self._nested(updated_node)

    def leave_GeneratorExp(self, original_node, updated_node):
        return self._nested(updated_node)

    def _nested(self, comp):
        if not self.compiled or comp.for_in.inner_for_in is None or _is_async(comp.for_in):
            return comp
        self.ctx.converted_sites += 1
        self.runtime_modules.add(_RUNTIME)
        helper = cst.parse_expression(f"{runtime_alias(_RUNTIME)}.joined")
        return _joined(comp.elt, comp.for_in, helper).with_changes(lpar=comp.lpar, rpar=comp.rpar)


def _joined(elt: cst.BaseExpression, clause: cst.CompFor, helper: cst.BaseExpression) -> cst.BaseExpression:
    """``[elt <clause>]`` with one ``for`` per comprehension: the inner clauses' lists, joined over the outer one."""
    if clause.inner_for_in is None:
        return cst.ListComp(elt=elt, for_in=clause)
    inner = _joined(elt, clause.inner_for_in, helper)
    outer = cst.ListComp(elt=inner, for_in=clause.with_changes(inner_for_in=None))
    return cst.Call(func=helper, args=[cst.Arg(outer)])


def _is_async(clause: cst.CompFor | None) -> bool:
    while clause is not None:
        if clause.asynchronous is not None:
            return True
        clause = clause.inner_for_in
    return False
