"""The converter rule SetKeysTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/set_keys.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import replace_nodes, walk

_TEMP = "_mp_items"
_BUILT = (cst.Tuple, cst.List, cst.Set, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.SimpleString)


class SetKeysTransform(GraphMethodRule):
    """In a model's methods, ``set(x)`` and ``frozenset(x)`` of a name, an attribute or a call's result read ``x``'s
    items from a name bound on the line before: ``_mp_items = tuple(x)`` then ``set(_mp_items)``, the same set in
    Python for every iterable.

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) runs ``set`` through the JIT Fallback, which is handed a dict
    as the tuple of its values: ``"cls" in set(outs)`` for a dict of head outputs was False, silently, where Python
    reads the keys. ``tuple(d)`` is compiled and is the dict's keys; bound first, it reaches the Fallback as constants
    (``set(tuple(outs))`` on one line does not: the Fallback takes the whole expression, and again the values). A
    literal, a comprehension or a ``tuple(...)`` argument is left as written, and so is a ``set`` in a lambda, a
    comprehension or an ``elif`` test.

    A set display of literals tested for membership, ``x.ndim in {2, 3}`` (x-transformers' ``AttentionLayers``), is
    written as a tuple display, ``x.ndim in (2, 3)``: the same answer for literal items (numbers, strings, None,
    booleans), and MindSpore 2.10's graph compiler rejects every set display ("Unsupported expression 'Set'").
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Heads(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "box": nn.Linear(4, 2)})

                    def forward(self, x):
                        outs = {name: head(x) for name, head in self.heads.items()}
                        if "cls" in set(outs):
                            x = outs["cls"]
                        return x * len(set(["a", "b"]))
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import containers as mp_containers


                class Heads(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.heads = mp_containers.ModuleDict({"cls": nn.Dense(in_channels=4, out_channels=2), "box": nn.Dense(in_channels=4, out_channels=2)})

                    def construct(self, x):
                        outs = {name: head(x) for name, head in self.heads.items()}
                        _mp_items = tuple(outs)
                        if "cls" in set(_mp_items):
                            x = outs["cls"]
                        return x * len(set(["a", "b"]))
            """,
            note="The dict's keys reach the set; a list display is left.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Net(nn.Module):
                    def forward(self, x):
                        assert x.ndim in {2, 3}
                        if x.shape[-1] not in {4, 8}:
                            x = x * 2
                        return x
            """,
            after="""
                from mindspore import nn


                class Net(nn.Cell):
                    def construct(self, x):
                        assert x.ndim in (2, 3)
                        if x.shape[-1] not in (4, 8):
                            x = x * 2
                        return x
            """,
            note="A set display of literals tested for membership is a tuple display.",
        ),
    )

    def leave_Comparison(self, original_node, updated_node):
        """``v in {1, 2}`` / ``v not in {"a", "b"}`` (every item a literal) -> a tuple display, in a compiled method."""
        if not self.compiled:
            return updated_node
        targets = []
        changed = False
        for target in updated_node.comparisons:
            display = target.comparator
            if isinstance(target.operator, (cst.In, cst.NotIn)) and isinstance(display, cst.Set) \
                    and all(not isinstance(item, cst.StarredElement) and _is_literal(item.value)
                            for item in display.elements):
                items = list(display.elements)
                if len(items) == 1:  # a one-item tuple needs its comma
                    items = [items[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace("")))]
                target = target.with_changes(comparator=cst.Tuple(
                    elements=items, lpar=[cst.LeftParen(whitespace_after=display.lbrace.whitespace_after)],
                    rpar=[cst.RightParen(whitespace_before=display.rbrace.whitespace_before)]))
                changed = True
                self.ctx.converted_sites += 1
            targets.append(target)
        return updated_node.with_changes(comparisons=targets) if changed else updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        return self._hoist(updated_node, updated_node)

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._elifs: set[int] = set()  # an ``elif`` is an If in its parent's orelse: nothing can go before it

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))

    def leave_If(self, original_node, updated_node):
        if id(original_node) in self._elifs:
            return updated_node
        return self._hoist(updated_node, updated_node.test)

    def _hoist(self, statement, part):
        """``statement`` with each ``set(x)`` of ``part`` (outside lambdas and comprehensions) reading ``x``'s items
        from a name bound on the line before: ``_mp_items = tuple(x)``."""
        if not self.compiled:
            return statement
        calls = _set_calls(part, self.scope)
        if not calls:
            return statement
        lines, replace = [], {}
        for number, call in enumerate(calls):
            name = _TEMP if number == 0 else f"{_TEMP}{number + 1}"
            lines.append(cst.SimpleStatementLine([cst.Assign(
                [cst.AssignTarget(cst.Name(name))], cst.Call(cst.Name("tuple"), [cst.Arg(call.args[0].value)]))]))
            replace[id(call)] = call.with_changes(args=[call.args[0].with_changes(value=cst.Name(name))])
        lines[0] = lines[0].with_changes(leading_lines=statement.leading_lines)
        statement = replace_nodes(statement.with_changes(leading_lines=[]), replace)
        self.ctx.converted_sites += len(calls)
        return cst.FlattenSentinel([*lines, statement])


def _is_literal(node: cst.BaseExpression) -> bool:
    """A number, a string, None/True/False, or a negated number."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    return False


_NESTED = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.FunctionDef, cst.ClassDef,
           cst.IndentedBlock)


def _set_calls(node: cst.CSTNode, scope) -> list[cst.Call]:
    """The ``set(x)``/``frozenset(x)`` calls to rewrite in ``node`` (a statement or an ``if`` test)."""
    found: list[cst.Call] = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, inner: cst.CSTNode) -> bool:
            if isinstance(inner, _NESTED):
                return False
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) \
                    and inner.func.value in ("set", "frozenset") and not scope.lookup(inner.func.value)[0] \
                    and len(inner.args) == 1 and inner.args[0].keyword is None and not inner.args[0].star:
                value = inner.args[0].value
                if not (isinstance(value, _BUILT) or (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                                                      and value.func.value in ("tuple", "list", "sorted"))):
                    found.append(inner)
                    return False
            return True

    walk(node, Visitor())
    return found

