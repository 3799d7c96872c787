"""The converter rule RoundIntTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/python_round.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import operand_kind, receiver_kind


class RoundIntTransform(Rule):
    """``round(n)`` of a Python number, with no ``ndigits`` -> ``int(round(n))``.

    Python's one-argument ``round`` returns an int, and code slices and sizes with it (LEDNet's channel split:
    ``c1 = round(c * 0.5); x[:, :c1]``). MindSpore's static graph (GRAPH_MODE) returns a float there, and the slice
    stops ("The type of input of the MakeSlice operator must be int64 but got ... Float32"). ``int(...)`` of an int is
    the same int in PyNative, and makes the graph's value an int. Only a value the converter knows is a Python number
    (sizes, lengths, ``int(...)``, arithmetic on them) is wrapped: ``round(t)`` of a tensor stays a tensor, and
    ``round(n, 2)`` is a float in Python too.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch


                def split(x):
                    c = int(x.shape[1])
                    c1 = round(c * 0.5)
                    return x[:, :c1], x[:, c1:], round(x[0, 0]), round(c / 3, 1)
            """,
            after="""


                def split(x):
                    c = int(x.shape[1])
                    c1 = int(round(c * 0.5))
                    return x[:, :c1], x[:, c1:], round(x[0, 0]), round(c / 3, 1)
            """,
            note="A size's round is an int in a graph too; a tensor's round and a round to digits are left alone.",
        ),
    )

    def leave_Call(self, original_node, updated_node):
        if not (isinstance(original_node.func, cst.Name) and original_node.func.value == "round"
                and len(original_node.args) == 1 and original_node.args[0].keyword is None
                and not original_node.args[0].star and self.scope.resolve(original_node.func) is None
                and _number(original_node.args[0].value, self.scope)):
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Call(func=cst.Name("int"), args=[cst.Arg(updated_node)])


def _number(expr, scope) -> bool:
    """Whether ``expr`` evidently holds a Python number: a numeric literal, a name bound to one (``c = int(...)``),
    a size (``x.shape[1]``, ``len(x)``, ``x.size(0)``), or arithmetic of those."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.BinaryOperation):
        return _number(expr.left, scope) and _number(expr.right, scope)
    if isinstance(expr, cst.UnaryOperation):
        return _number(expr.expression, scope)
    if isinstance(expr, cst.Name):
        return operand_kind(expr, scope) == "python"
    return receiver_kind(expr, scope) == "python"
