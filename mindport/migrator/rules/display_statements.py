"""The converter rule DisplayStatementTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/display_statements.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import own_nodes
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import target_names


class DisplayStatementTransform(GraphMethodRule):
    """In a model's methods, a statement that is a tuple or list of expressions kept for their side effects
    (``row.append(i), col.append(j)``) is one statement per expression, in order; a list or set comprehension kept for
    its side effects (``[parts.append(f(x)) for x in xs]``) is the ``for`` loop it runs.

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) evaluates such a display as a value nobody reads and drops
    the calls in it: the lists stay empty, silently, until something indexes with them ("The sequence
    element(tuple/list) in tuple index can't be empty": torchfm's product networks build their field pairs this
    way). Python runs the same calls in the same order either way, so the statements and the loop are what the
    display meant, and a graph keeps them.

    A comprehension becomes a loop only when its loop names appear nowhere else in the method (the loop binds them
    in the method, where the comprehension kept them to itself); a starred element, an ``async`` clause or a
    generator expression (whose calls Python never runs) is left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class InnerProduct(nn.Module):
                    def forward(self, x):
                        num_fields = x.shape[1]
                        row, col = list(), list()
                        for i in range(num_fields - 1):
                            for j in range(i + 1, num_fields):
                                row.append(i), col.append(j)  # every pair of fields
                        return torch.sum(x[:, row] * x[:, col], dim=2)
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import math as mp_math


                class InnerProduct(nn.Cell):
                    def construct(self, x):
                        num_fields = x.shape[1]
                        row, col = list(), list()
                        for i in range(num_fields - 1):
                            for j in range(i + 1, num_fields):
                                row.append(i)
                                col.append(j)  # every pair of fields
                        return mp_math.sum(x[:, row] * x[:, col], dim=2)
            """,
            note="Each call its own statement: a graph keeps what a tuple display dropped.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Parts(nn.Module):
                    def forward(self, xs):
                        parts = []
                        [parts.append(x * 2) for x in xs if x is not None]
                        return torch.cat(parts, dim=0)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                class Parts(nn.Cell):
                    def construct(self, xs):
                        parts = []
                        for x in xs:
                            if x is not None:
                                parts.append(x * 2)
                        return ops.cat(mp_tensor.promoted(parts), axis=0)
            """,
            note="A comprehension run for its calls is the loop it runs.",
        ),
        Example(
            before="""
                def pairs(n):
                    row, col = [], []
                    [row.append(i) for i in range(n)], col.append(n)
                    return row, col
            """,
            note="Outside a model class's methods (what a graph compiles), left as written.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._functions: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self._functions.append(node)

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.compiled or len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.Expr):
            return updated_node
        value = updated_node.body[0].value
        if isinstance(value, (cst.Tuple, cst.List)) and value.elements \
                and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            statements = [cst.SimpleStatementLine(body=[cst.Expr(e.value)]) for e in value.elements]
        elif isinstance(value, (cst.ListComp, cst.SetComp)) and _clauses(value.for_in) \
                and self._private_targets(original_node.body[0].value):
            statements = [_loop(value.elt, _clauses(value.for_in))]
        else:
            return updated_node
        self.ctx.converted_sites += 1
        statements[0] = statements[0].with_changes(leading_lines=updated_node.leading_lines)
        comment = updated_node.trailing_whitespace
        if comment.comment is not None:
            if isinstance(statements[-1], cst.SimpleStatementLine):
                statements[-1] = statements[-1].with_changes(trailing_whitespace=comment)
            else:  # a loop: the comment stands on its own line above it
                statements[-1] = statements[-1].with_changes(leading_lines=[
                    *statements[-1].leading_lines, cst.EmptyLine(comment=comment.comment)])
        return cst.FlattenSentinel(statements)

    def _private_targets(self, comp: cst.ListComp | cst.SetComp) -> bool:
        """Whether the comprehension's loop names are read or bound nowhere else in the method."""
        names = {n for clause in _clauses(comp.for_in) for n in target_names(clause.target)}
        inside = [n.value for n in _names_in(comp)]
        method = [n.value for n in own_nodes(self._functions[-1], cst.Name)] if self._functions else inside
        return all(method.count(name) == inside.count(name) for name in names)


def _clauses(clause: cst.CompFor) -> list[cst.CompFor]:
    """The comprehension's ``for`` clauses, outermost first; empty when one is ``async``."""
    found = []
    while clause is not None:
        if clause.asynchronous is not None:
            return []
        found.append(clause)
        clause = clause.inner_for_in
    return found


def _loop(elt: cst.BaseExpression, clauses: list[cst.CompFor]) -> cst.For:
    """The nested ``for``/``if`` statements a comprehension runs, ``elt`` the innermost statement."""
    body: cst.BaseStatement = cst.SimpleStatementLine(body=[cst.Expr(elt)])
    for clause in reversed(clauses):
        for test in reversed(clause.ifs):
            body = cst.If(test=test.test, body=cst.IndentedBlock(body=[body]))
        body = cst.For(target=clause.target, iter=clause.iter, body=cst.IndentedBlock(body=[body]))
    return body


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name):
            found.append(name)

    node.visit(_Names())
    return found
