"""The converter rule XorTestTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/truth_tests.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule


class XorTestTransform(Rule):
    """``a ^ b`` whose value is only tested for truth (the test of an ``if``, ``while``, ``assert`` or conditional
    expression, or the operand of ``not`` or of ``and``/``or`` there) -> ``a != b``.

    x-transformers checks its arguments with ``assert not (self.cross_attend ^ exists(context))``: two Python bools.
    MindSpore's static graph (GRAPH_MODE) compiles ``^`` to its BitXor operation, which takes integers only, and
    stops ("For BitXor, only integer types are supported, but got ... BoolImm"). Tested for truth, ``a ^ b`` and
    ``a != b`` agree for bools, integers and sets alike (``a ^ b`` is zero, or empty, exactly when ``a == b``), and
    ``!=`` compiles. A ``^`` whose value is used otherwise (assigned, returned, computed with) is left alone.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                def exists(v):
                    return v is not None


                class Block(nn.Module):
                    def __init__(self, cross_attend=False):
                        super().__init__()
                        self.cross_attend = cross_attend

                    def forward(self, x, context=None):
                        assert not (self.cross_attend ^ exists(context)), 'context must be passed in if cross_attend'
                        return x, self.cross_attend ^ True
            """,
            after="""
                from mindspore import nn


                def exists(v):
                    return v is not None


                class Block(nn.Cell):
                    def __init__(self, cross_attend=False):
                        super().__init__()
                        self.cross_attend = cross_attend

                    def construct(self, x, context=None):
                        assert not (self.cross_attend != exists(context)), 'context must be passed in if cross_attend'
                        return x, self.cross_attend ^ True
            """,
            note="Tested for truth, ^ is !=, which a static graph compiles; the returned ^ is left as it is.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._tested: set[int] = set()  # ids of the expressions whose value is only tested for truth

    def _test(self, expr) -> None:
        while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            expr = expr.expression
        self._tested.add(id(expr))
        if isinstance(expr, cst.BooleanOperation):
            self._test(expr.left)
            self._test(expr.right)

    def visit_If(self, node: cst.If) -> None:
        self._test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._test(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._test(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._test(node.test)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._test(node.expression)

    def leave_BinaryOperation(self, original_node, updated_node):
        if id(original_node) not in self._tested or not isinstance(original_node.operator, cst.BitXor):
            return updated_node
        self.ctx.converted_sites += 1
        op = updated_node.operator
        return cst.Comparison(left=updated_node.left, lpar=updated_node.lpar, rpar=updated_node.rpar,
                              comparisons=[cst.ComparisonTarget(
                                  operator=cst.NotEqual(whitespace_before=op.whitespace_before,
                                                        whitespace_after=op.whitespace_after),
                                  comparator=updated_node.right)])
