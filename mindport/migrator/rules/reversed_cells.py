"""The converter rule ReversedCellsTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/reversed_cells.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import list_only_locals
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import on_self


class ReversedCellsTransform(Rule):
    """A loop over ``reversed(self.blocks)`` becomes a loop over ``list(self.blocks)[::-1]``.

    U-Nets and decoders walk their up-sampling stages backwards (``for up in reversed(self.up):``). MindSpore's
    static graph (GRAPH_MODE, ``@jit``) does not compile ``reversed`` over a CellList ("Unsupported element
    type[unknown]"), or runs the stages in the wrong order (a GroupNorm then sees the wrong channel count); a reversed
    copy of the list compiles and gives the same stages in the same order, in both modes. A list the function
    builds itself, walked backwards beside the stages (``zip(self.upsample, reversed(skips))``: WaveGrad), does not
    compile either ("Cast-op0 does not support this kernel data type", or a convolution given the wrong skip's
    channels): ``skips[::-1]``. A comprehension over ``reversed(feats)`` (a list the method was given, or any
    value) compiles to other numbers, silently (``sum([w * f for w, f in zip(ws, reversed(feats))])``), and
    ``enumerate(reversed(feats))`` does not compile: there ``list(feats)[::-1]``, the same items in the same order
    for any value ``reversed`` takes. A reversed range beside the stages (``zip(reversed(range(n)), self.layers)``:
    vit-pytorch's NesT) does not compile over a CellList either ("Unsupported element type[unknown]", "Cast-op0 does
    not support this kernel data type"): it is written as the range of the same integers backwards,
    ``range(n - 1, -1, -1)`` (``range(a, b)``: ``range(b - 1, a - 1, -1)``), which a graph compiles; a range with a
    step is left as written. Only loops (``for`` and comprehensions, directly or as an argument of ``zip`` or
    ``enumerate``) are rewritten: there the result is iterated once, as a list is. A plain ``for`` over
    ``reversed(range(n))`` or over ``reversed`` of a value of unknown kind (a graph runs it right), and ``reversed``
    kept as an iterator (``next(...)``) are left as written.
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
        Example(
            before="""
                import torch.nn as nn


                class UNet(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.down = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
                        self.up = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])

                    def forward(self, x, feats):
                        skips = []
                        for down in self.down:
                            x = down(x)
                            skips.append(x)
                        for up, skip in zip(self.up, reversed(skips)):
                            x = up(x) + skip
                        for level, up in zip(reversed(range(len(self.up))), self.up):
                            x = up(x) * level
                        return x + sum([f.mean() for f in reversed(feats)])
            """,
            after="""
                from mindspore import nn


                class UNet(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.down = nn.CellList([nn.Dense(in_channels=8, out_channels=8), nn.Dense(in_channels=8, out_channels=8)])
                        self.up = nn.CellList([nn.Dense(in_channels=8, out_channels=8), nn.Dense(in_channels=8, out_channels=8)])

                    def construct(self, x, feats):
                        skips = []
                        for down in self.down:
                            x = down(x)
                            skips.append(x)
                        for up, skip in zip(self.up, skips[::-1]):
                            x = up(x) + skip
                        for level, up in zip(range(len(self.up) - 1, -1, -1), self.up):
                            x = up(x) * level
                        return x + sum([f.mean() for f in list(feats)[::-1]])
            """,
            note="A list the method builds, walked backwards beside the stages: its reversed copy; a reversed range "
                 "beside them: the range backwards; a given list in a comprehension: a reversed list of its items.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._functions: list[cst.FunctionDef] = []
        self._lists: dict[int, frozenset[str]] = {}  # id(function) -> native_facts.list_only_locals, once

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node, updated_node):
        self._lists.pop(id(self._functions.pop()), None)
        return updated_node

    def leave_For(self, original_node, updated_node):
        return self._rewrite(updated_node)

    def leave_CompFor(self, original_node, updated_node):
        return self._rewrite(updated_node)

    def _rewrite(self, node):
        call = node.iter
        if _is_builtin_call(call, ("zip", "enumerate")) and not self.scope.lookup(call.func.value)[0]:
            args = [a.with_changes(value=self._reversed_copy(a.value, True)) if a.keyword is None and not a.star
                    else a for a in call.args]
            return node.with_changes(iter=call.with_changes(args=args))
        return node.with_changes(iter=self._reversed_copy(call, isinstance(node, cst.CompFor)))

    def _reversed_copy(self, call: cst.BaseExpression, any_value: bool) -> cst.BaseExpression:
        """``reversed(self.up)`` -> ``list(self.up)[::-1]``, ``reversed(skips)`` on a list the function builds ->
        ``skips[::-1]``; with ``any_value``, ``reversed(feats)`` of any other value but a range ->
        ``list(feats)[::-1]``; anything else as it is."""
        if not (_is_builtin_call(call, ("reversed",)) and len(call.args) == 1 and call.args[0].keyword is None
                and not call.args[0].star and not self.scope.lookup("reversed")[0]):
            return call
        value = call.args[0].value
        if any_value and self._plain_range(value):
            self.ctx.converted_sites += 1
            return _reversed_range(value)
        if isinstance(value, cst.Name) and value.value in self._own_lists():
            pass
        elif on_self(value) or (any_value and not _is_builtin_call(value, ("range",))):
            value = cst.Call(func=cst.Name("list"), args=[cst.Arg(value)])
        else:
            return call
        self.ctx.converted_sites += 1
        return cst.Subscript(value=value, slice=[cst.SubscriptElement(
            cst.Slice(lower=None, upper=None, step=cst.UnaryOperation(cst.Minus(), cst.Integer("1"))))])

    def _plain_range(self, value: cst.BaseExpression) -> bool:
        return (_is_builtin_call(value, ("range",)) and len(value.args) in (1, 2)
                and not any(a.star or a.keyword for a in value.args) and not self.scope.lookup("range")[0])

    def _own_lists(self) -> frozenset[str]:
        if not self._functions:
            return frozenset()
        function = self._functions[-1]
        if id(function) not in self._lists:
            self._lists[id(function)] = list_only_locals(function)
        return self._lists[id(function)]


def _is_builtin_call(node: cst.BaseExpression, names: tuple[str, ...]) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in names


def _reversed_range(value: cst.Call) -> cst.Call:
    """``range(stop)`` -> ``range(stop - 1, -1, -1)``, ``range(start, stop)`` -> ``range(stop - 1, start - 1, -1)``:
    the items of ``reversed(range(...))`` in the same order for any integers (none when the range is empty)."""
    def less_one(expr: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(expr, cst.Integer):
            return cst.Integer(str(int(expr.value, 0) - 1)) if int(expr.value, 0) >= 1 else \
                cst.UnaryOperation(cst.Minus(), cst.Integer(str(1 - int(expr.value, 0))))
        if not isinstance(expr, (cst.Name, cst.Call, cst.Attribute, cst.Subscript)) and not expr.lpar:
            expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.BinaryOperation(left=expr, operator=cst.Subtract(), right=cst.Integer("1"))

    args = [a.value for a in value.args]
    start, stop = (cst.Integer("0"), args[0]) if len(args) == 1 else args
    minus_one = cst.UnaryOperation(cst.Minus(), cst.Integer("1"))
    return value.with_changes(args=[cst.Arg(less_one(stop)), cst.Arg(less_one(start)), cst.Arg(minus_one)])
