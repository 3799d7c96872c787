"""The converter rule IterNextTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/iter_next.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example
from mindport.migrator.rules.list_pop import _NESTED, OwnListRule
from mindport.migrator.walk import parse_expression, parse_statement, replace_nodes, walk

_TEMP = "_mp_next"


class IterNextTransform(OwnListRule):
    """In a model's methods, an iterator over a list the method builds, ``it = iter(xs)``, read only with ``next(it)``
    or ``next(it, default)``, becomes the list and an index: ``it = xs`` and ``_mp_it_at = 0``; ``y = next(it, d)`` is
    ``if _mp_it_at < len(it): y = it[_mp_it_at] / else: y = d`` then ``_mp_it_at = _mp_it_at + 1``.

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) has no ``next`` with a default ("For 'Next', the number of
    input should be 1, but got 2": x-transformers hands each layer ``cache = next(iter_attn_cache, None)`` over a
    list that is empty without a cache, 3 trials entries), and its ``iter``/``next`` over a list do not keep the
    iterator's position between calls in a loop over sub-Cells. An index into the list compiles (the loop is unrolled,
    the index and ``len`` are constants) and gives Python's items in both modes. A ``next`` inside an expression is
    read into ``_mp_next`` on the line before (the default is evaluated only when the list is used up; Python
    evaluates it always, which matters only for a default with side effects). ``next(it)`` past the end raises
    ``IndexError`` instead of ``StopIteration``.

    Only lists the method builds (``xs = []``, ``[...]``, a list comprehension) and never hands over whole, an
    iterator bound once and used nowhere but as ``next``'s first argument, each ``next`` on a line of its own level
    (not in a lambda, a comprehension, a conditional expression, ``and``/``or`` or the test of an ``if``/``while``):
    anything else leaves the iterator as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Decoder(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

                    def forward(self, x, cache=None):
                        caches = []
                        if cache is not None:
                            caches = [cache]
                        iter_caches = iter(caches)
                        for layer in self.layers:
                            x = layer(x)
                            past = next(iter_caches, None)
                            if past is not None:
                                x = x + past
                        return x
            """,
            after="""
                from mindspore import nn


                class Decoder(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.layers = nn.CellList([nn.Dense(in_channels=4, out_channels=4), nn.Dense(in_channels=4, out_channels=4)])

                    def construct(self, x, cache=None):
                        caches = []
                        if cache is not None:
                            caches = [cache]
                        iter_caches = caches
                        _mp_iter_caches_at = 0
                        for layer in self.layers:
                            x = layer(x)
                            if _mp_iter_caches_at < len(iter_caches):
                                past = iter_caches[_mp_iter_caches_at]
                            else:
                                past = None
                            _mp_iter_caches_at = _mp_iter_caches_at + 1
                            if past is not None:
                                x = x + past
                        return x
            """,
            note="The iterator is the list and an index; each next reads the item at the index or the default.",
        ),
        Example(
            before="""
                def first_cache(caches):
                    it = iter(caches)
                    return next(it, None)
            """,
            after=None,
            note="Outside a model's methods (code a graph does not compile) the iterator is left as written.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._iterators: list[dict[str, str]] = []  # per enclosing function: iterator name -> its index name

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        lists = self._lists[-1]
        self._iterators.append(_index_iterators(node, lists) if lists else {})

    def leave_FunctionDef(self, original_node, updated_node):
        self._iterators.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        iterators = self._iterators[-1] if self._iterators else None
        if not iterators or len(updated_node.body) != 1:
            return updated_node
        stmt = updated_node.body[0]
        made = _iter_made(stmt)
        if made is not None and made[0] in iterators:
            name, source = made
            lines = [parse_statement(f"{name} = {source}"), parse_statement(f"{iterators[name]} = 0")]
            lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
            self.ctx.converted_sites += 1
            return cst.FlattenSentinel(lines)
        calls = _next_calls(stmt, frozenset(iterators))
        if not calls:
            return updated_node
        whole = isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and len(calls) == 1 \
            and stmt.value is calls[0] and isinstance(stmt.targets[0].target, cst.Name)
        lines: list = []
        swaps = {}
        for k, call in enumerate(calls):
            it = call.args[0].value.value
            at = iterators[it]
            target = stmt.targets[0].target.value if whole else (_TEMP if k == 0 else f"{_TEMP}_{k}")
            read = parse_statement(f"{target} = {it}[{at}]")
            if len(call.args) == 2:
                other = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], call.args[1].value)])
                lines.append(cst.If(test=parse_expression(f"{at} < len({it})"), body=cst.IndentedBlock([read]),
                                    orelse=cst.Else(cst.IndentedBlock([other]))))
            else:
                lines.append(read)
            lines.append(parse_statement(f"{at} = {at} + 1"))
            swaps[id(call)] = cst.Name(target)
        if not whole:
            lines.append(updated_node.with_changes(body=[replace_nodes(stmt, swaps)]))
        lines = [ln.with_changes(leading_lines=updated_node.leading_lines if i == 0 else []) for i, ln in
                 enumerate(lines)]
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(lines)


def _iter_made(stmt: cst.CSTNode) -> "tuple[str, str] | None":
    """(iterator name, list name) of ``it = iter(xs)``."""
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name) \
            and isinstance(stmt.value, cst.Call) and isinstance(stmt.value.func, cst.Name) \
            and stmt.value.func.value == "iter" and len(stmt.value.args) == 1 \
            and stmt.value.args[0].keyword is None and not stmt.value.args[0].star \
            and isinstance(stmt.value.args[0].value, cst.Name):
        return stmt.targets[0].target.value, stmt.value.args[0].value.value
    return None


def _next_of(node: cst.CSTNode, iterators: frozenset[str]) -> str | None:
    """The iterator name of ``next(it)`` / ``next(it, default)`` on one of ``iterators``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "next" \
            and 1 <= len(node.args) <= 2 and all(a.keyword is None and not a.star for a in node.args) \
            and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value in iterators:
        return node.args[0].value.value
    return None


def _next_calls(stmt: cst.CSTNode, iterators: frozenset[str]) -> list:
    """The ``next`` calls on the statement's own level, in the order Python evaluates them (left to right; none in
    a nested construct, which _index_iterators refused already)."""
    found: list = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, _NESTED):
                return False
            if _next_of(node, iterators):
                found.append(node)
                return False
            return True

    walk(stmt, Visitor())
    return found


def _index_iterators(node: cst.FunctionDef, lists: frozenset[str]) -> dict[str, str]:
    """Iterator name -> index name for the function's ``it = iter(xs)`` over one of its own lists, bound once and
    used only as the first argument of ``next`` calls on a simple line's own level."""
    made: dict[str, int] = {}
    bound: dict[str, int] = {}
    uses: dict[str, int] = {}
    good_uses: dict[str, int] = {}

    class Visitor(cst.CSTVisitor):
        def __init__(self) -> None:
            self.depth = 0  # > 0 inside a nested construct or a compound statement's header

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node

        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> None:
            if len(line.body) == 1:
                pair = _iter_made(line.body[0])
                if pair and pair[1] in lists:
                    made[pair[0]] = made.get(pair[0], 0) + 1

        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, _NESTED):
                self.depth += 1
            if isinstance(n, cst.Call) and self.depth == 0 and isinstance(n.func, cst.Name) \
                    and n.func.value == "next" and n.args and isinstance(n.args[0].value, cst.Name):
                if 1 <= len(n.args) <= 2 and all(a.keyword is None and not a.star for a in n.args):
                    good_uses[n.args[0].value.value] = good_uses.get(n.args[0].value.value, 0) + 1
            if isinstance(n, (cst.If, cst.While)):
                self.depth += 1
                walk(n.test, self)
                self.depth -= 1
                walk(n.body, self)
                if n.orelse is not None:
                    walk(n.orelse, self)
                return False
            if isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name):
                bound[n.target.value] = bound.get(n.target.value, 0) + 1
                return False
            if isinstance(n, cst.Name):
                uses[n.value] = uses.get(n.value, 0) + 1
            return super().on_visit(n)

        def on_leave(self, n: cst.CSTNode) -> None:
            if isinstance(n, _NESTED):
                self.depth -= 1
            super().on_leave(n)

    walk(node, Visitor())
    out = {}
    for it, count in made.items():
        # the target's Name is visited through AssignTarget (counted in bound, not in uses)
        if count == 1 and bound.get(it) == 1 and uses.get(it, 0) == good_uses.get(it, 0) > 0:
            out[it] = f"_mp_{it.lstrip('_')}_at"
    return out
