"""The converter rule ReversedCellsTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/reversed_cells.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule


class ReversedCellsTransform(Rule):
    """A loop over ``reversed(self.blocks)`` becomes a loop over ``list(self.blocks)[::-1]``.

    U-Nets and decoders walk their up-sampling stages backwards (``for up in reversed(self.up):``). MindSpore's
    static graph (GRAPH_MODE, ``@jit``) does not compile ``reversed`` over a CellList ("Unsupported element
    type[unknown]"), or runs the stages in the wrong order (a GroupNorm then sees the wrong channel count); a reversed
    copy of the list compiles and gives the same stages in the same order, in both modes. Only loops (``for`` and
    comprehensions) over an attribute of ``self`` are rewritten: there the result is iterated once, as a list is.
    ``reversed(range(n))`` and ``reversed`` kept as an iterator (``next(...)``) are left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Decoder(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.up = nn.ModuleList([nn.Linear(8, 4), nn.Linear(4, 8)])

                    def forward(self, h):
                        for i in reversed(range(2)):
                            h = h * i
                        for up in reversed(self.up):
                            h = up(h)
                        return h
            """,
            after="""
                from mindspore import nn


                class Decoder(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.up = nn.CellList([nn.Dense(in_channels=8, out_channels=4), nn.Dense(in_channels=4, out_channels=8)])

                    def construct(self, h):
                        for i in reversed(range(2)):
                            h = h * i
                        for up in list(self.up)[::-1]:
                            h = up(h)
                        return h
            """,
            note="The stages of a CellList, backwards: a reversed list, which a static graph compiles.",
        ),
    )

    def leave_For(self, original_node, updated_node):
        return self._rewrite(updated_node)

    def leave_CompFor(self, original_node, updated_node):
        return self._rewrite(updated_node)

    def _rewrite(self, node):
        call = node.iter
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "reversed"
                and len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star
                and _on_self(call.args[0].value) and not self.scope.lookup("reversed")[0]):
            return node
        self.ctx.converted_sites += 1
        copy = cst.Call(func=cst.Name("list"), args=[cst.Arg(call.args[0].value)])
        return node.with_changes(iter=cst.Subscript(value=copy, slice=[cst.SubscriptElement(
            cst.Slice(lower=None, upper=None, step=cst.UnaryOperation(cst.Minus(), cst.Integer("1"))))]))


def _on_self(expr: cst.BaseExpression) -> bool:
    """``self.up``, ``self.decoder.blocks``: an attribute of the object (a layer container)."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
        if isinstance(expr, cst.Name):
            return expr.value == "self"
    return False
