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
    its side effects (``[parts.append(f(x)) for x in xs]``) is the ``for`` loop it runs; a conditional expression
    (``row.append(i) if i else None``) the ``if`` statement, a short-circuit test (``i > 1 and row.append(i)``,
    ``f(x) or g(x)``) the ``if`` on its left side, and ``not f(x)`` the call. A left side that is a list's, dict's or
    set's method giving None (``d.update(a) or row.append(b)``) is its statement, the right side's run as Python
    settles it (a graph applied ``dict.update`` in a test's condition to nothing).

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
                import torch.nn as nn


                class Picked(nn.Module):
                    def forward(self, x):
                        row = []
                        for i in range(3):
                            row.append(i) if i > 0 else None
                            i > 1 and row.append(i)
                        return x[:, row]
            """,
            after="""
                from mindspore import nn


                class Picked(nn.Cell):
                    def construct(self, x):
                        row = []
                        for i in range(3):
                            if i > 0:
                                row.append(i)
                            if i > 1:
                                row.append(i)
                        return x[:, row]
            """,
            note="A conditional expression or a short-circuit test run for its calls is the `if` it means.",
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
        if not isinstance(value, _DISPLAYS):
            return updated_node  # a call, a name, a docstring: kept by a graph as it is
        statements = self._statements(value, original_node.body[0].value)
        if not statements:
            return updated_node
        self.ctx.converted_sites += 1
        statements[0] = statements[0].with_changes(leading_lines=updated_node.leading_lines)
        comment = updated_node.trailing_whitespace
        if comment.comment is not None:
            if isinstance(statements[-1], cst.SimpleStatementLine):
                statements[-1] = statements[-1].with_changes(trailing_whitespace=comment)
            else:  # a loop or a test: the comment stands on its own line above it
                statements[-1] = statements[-1].with_changes(leading_lines=[
                    *statements[-1].leading_lines, cst.EmptyLine(comment=comment.comment)])
        return cst.FlattenSentinel(statements)

    def _statements(self, value, original) -> list | None:
        """The statements that run what ``value`` (an expression statement's, ``original`` before this pass) runs, in
        order and under the same conditions; None when one part has no such form (the statement stays)."""
        if isinstance(value, (cst.Tuple, cst.List)):
            if not value.elements or any(isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            parts = [self._statements(e.value, o.value) for e, o in zip(value.elements, original.elements)]
            return None if any(p is None for p in parts) else [s for p in parts for s in p]
        if isinstance(value, (cst.ListComp, cst.SetComp)):
            clauses = _clauses(value.for_in)
            return [_loop(value.elt, clauses)] if clauses and self._private_targets(original) else None
        if isinstance(value, cst.IfExp):  # f(x) if c else None
            body, orelse = self._statements(value.body, original.body), self._statements(value.orelse, original.orelse)
            if body is None or orelse is None:
                return None
            return [cst.If(test=value.test, body=cst.IndentedBlock(body=body or [cst.SimpleStatementLine([cst.Pass()])]),
                           orelse=cst.Else(body=cst.IndentedBlock(body=orelse)) if orelse else None)]
        if isinstance(value, cst.BooleanOperation):  # c and f(x), f(x) or g(x): the right side runs on a condition
            right = self._statements(value.right, original.right)
            if not right:
                return None
            if _gives_none(value.left):  # d.update(a) or d.setdefault(k, v): the left's None decides, known here
                left = self._statements(value.left, original.left)
                return left + (right if isinstance(value.operator, cst.Or) else [])
            test = value.left if isinstance(value.operator, cst.And) else cst.UnaryOperation(
                operator=cst.Not(), expression=_parenthesized(value.left))
            return [cst.If(test=test, body=cst.IndentedBlock(body=right))]
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):  # not f(x)
            return self._statements(value.expression, original.expression)
        if isinstance(value, (cst.Name, cst.Call, cst.Attribute, cst.Subscript, cst.SimpleString, cst.Integer,
                              cst.Float)):
            if isinstance(value, cst.Name) and value.value == "None":
                return []
            return [cst.SimpleStatementLine(body=[cst.Expr(value.with_changes(lpar=[], rpar=[]))])]
        return None

    def _private_targets(self, comp: cst.ListComp | cst.SetComp) -> bool:
        """Whether the comprehension's loop names are read or bound nowhere else in the method."""
        names = {n for clause in _clauses(comp.for_in) for n in target_names(clause.target)}
        inside = [n.value for n in _names_in(comp)]
        method = [n.value for n in own_nodes(self._functions[-1], cst.Name)] if self._functions else inside
        return all(method.count(name) == inside.count(name) for name in names)


# the expression statements a graph drops the calls of (measured on MindSpore 2.10): displays, comprehensions,
# conditional expressions, short-circuit tests and a negation, each kept only for what it runs
_DISPLAYS = (cst.Tuple, cst.List, cst.ListComp, cst.SetComp, cst.IfExp, cst.BooleanOperation, cst.UnaryOperation)


# methods of Python's lists, dicts and sets that give None: a test of their result is settled before it runs (a
# graph applied dict.update inside a test's condition to nothing: "The key a does not exist in the dict")
_NONE_METHODS = {"append", "extend", "insert", "remove", "clear", "sort", "reverse", "update", "add", "discard"}


def _gives_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value in _NONE_METHODS


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Call, cst.Attribute, cst.Subscript)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


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
