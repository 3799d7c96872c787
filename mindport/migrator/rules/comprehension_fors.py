"""The converter rule ComprehensionForsTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/comprehension_fors.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule


class ComprehensionForsTransform(GraphMethodRule):
    """In a model's methods, a list comprehension or generator expression with several ``for`` clauses is written as
    nested one-``for`` comprehensions joined by ``sum(..., [])``: ``[f(a, b) for a in xs for b in ys]`` is
    ``sum([[f(a, b) for b in ys] for a in xs], [])``.

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) takes one ``for`` per comprehension ("The 'generators'
    supports 1 'comprehension' in ListComp/GeneratorExp, but got 2 comprehensions"), and compiles the nested form,
    whose items come in the same order (each ``if`` stays with its own ``for``). A generator expression becomes the
    list, which the call that consumed it (``tuple(...)``, ``torch.cat(...)``) reads the same. Only in the methods a
    graph compiles (a model class's, not ``__init__``), and not where the file binds ``sum`` to something else.
    """

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


                class Pairs(nn.Cell):
                    def construct(self, xs, ys):
                        prods = sum([[a * b for b in ys if b is not None] for a in xs], [])
                        return ops.cat(mp_tensor.promoted(tuple(sum([[a + b for b in ys] for a in xs if a is not None], []))), axis=0), prods
            """,
            note="Each `if` stays with its `for`; the items come in the same order.",
        ),
        Example(
            before="""
                def grid(n):
                    return [(i, j) for i in range(n) for j in range(n)]
            """,
            note="Outside a model class's methods (what a graph compiles), left as written.",
        ),
    )

    def leave_ListComp(self, original_node, updated_node):
        return self._nested(updated_node)

    def leave_GeneratorExp(self, original_node, updated_node):
        return self._nested(updated_node)

    def _nested(self, comp):
        if not self.compiled or comp.for_in.inner_for_in is None \
                or _is_async(comp.for_in) or self.scope.lookup("sum")[0]:
            return comp
        self.ctx.converted_sites += 1
        return _joined(comp.elt, comp.for_in).with_changes(lpar=comp.lpar, rpar=comp.rpar)


def _joined(elt: cst.BaseExpression, clause: cst.CompFor) -> cst.BaseExpression:
    """``[elt <clause>]`` with one ``for`` per comprehension: the inner clauses' list, summed over the outer one."""
    if clause.inner_for_in is None:
        return cst.ListComp(elt=elt, for_in=clause)
    inner = _joined(elt, clause.inner_for_in)
    outer = cst.ListComp(elt=inner, for_in=clause.with_changes(inner_for_in=None))
    return cst.Call(func=cst.Name("sum"), args=[cst.Arg(outer), cst.Arg(cst.List([]))])


def _is_async(clause: cst.CompFor | None) -> bool:
    while clause is not None:
        if clause.asynchronous is not None:
            return True
        clause = clause.inner_for_in
    return False
