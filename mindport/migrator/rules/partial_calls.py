"""The converter rule PartialCallTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/partial_calls.md shows both."""
from __future__ import annotations

import collections

import libcst as cst

from mindport.migrator.rules.base import Example, Rule

_SIMPLE = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString)


class PartialCallTransform(Rule):
    """Inside a function, ``kernel = partial(fn, a, k=v)`` whose name is only ever called is written out at each
    call: ``kernel(x, is_query=True)`` becomes ``fn(a, x, k=v, is_query=True)``, and the binding goes.

    MindSpore's static graph (GRAPH_MODE, ``@jit``) compiles a ``functools.partial`` object called twice with
    different keywords into one call: ``create_kernel(q, is_query=True)`` and ``create_kernel(k, is_query=False)``
    both gave the second call's result, silently (performer's FAVOR+ attention: max rel 0.25 on random inputs; the
    whole model 2.6e-4). The written-out calls mean the same in Python: the partial's arguments come first, a keyword
    given at the call replaces the partial's. Only partials of plain arguments (names, attributes, constants; no
    ``*``/``**``) whose names the function binds at most once, the partial bound once and only ever called, never
    with ``**``; anything else is left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                from functools import partial


                def kernel(data, *, projection, is_query, eps=1e-4):
                    return data @ projection + (eps if is_query else -eps)


                def attend(q, k, projection):
                    create_kernel = partial(kernel, projection=projection, eps=1e-6)
                    q = create_kernel(q, is_query=True)
                    k = create_kernel(k, is_query=False, eps=0.0)
                    return q * k
            """,
            after="""
                from functools import partial


                def kernel(data, *, projection, is_query, eps=1e-4):
                    return data @ projection + (eps if is_query else -eps)


                def attend(q, k, projection):
                    q = kernel(q, projection=projection, eps=1e-6, is_query=True)
                    k = kernel(k, projection=projection, is_query=False, eps=0.0)
                    return q * k
            """,
            note="Each call written out; a keyword given at the call replaces the partial's (eps).",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._plans: list[dict[str, cst.Call]] = []  # per enclosing function: name -> its partial(...) call

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._plans.append(self._plan(node))

    def leave_FunctionDef(self, original_node, updated_node):
        self._plans.pop()
        return updated_node

    def _plan(self, node: cst.FunctionDef) -> dict[str, cst.Call]:
        bindings: collections.Counter = collections.Counter()
        partials: dict[str, cst.Call] = {}
        uses: collections.Counter = collections.Counter()
        calls: collections.Counter = collections.Counter()
        starred: set[str] = set()
        is_partial = self._is_partial

        class Visitor(cst.CSTVisitor):
            def visit_FunctionDef(self, inner):
                return inner is node  # nested functions plan for themselves

            def visit_Lambda(self, inner):
                return False

            def visit_AssignTarget(self, target):
                for name in _names(target.target):
                    bindings[name] += 1

            def visit_Assign(self, assign):
                if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                        and isinstance(assign.value, cst.Call) and is_partial(assign.value):
                    partials[assign.targets[0].target.value] = assign.value

            def visit_AugAssign(self, assign):
                for name in _names(assign.target):
                    bindings[name] += 2

            def visit_For(self, loop):
                for name in _names(loop.target):
                    bindings[name] += 2

            def visit_Call(self, call):
                if isinstance(call.func, cst.Name):
                    calls[call.func.value] += 1
                    if any(a.star == "**" for a in call.args):
                        starred.add(call.func.value)

            def visit_Name(self, name):
                uses[name.value] += 1

        node.visit(Visitor())
        params = node.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                bindings[p.name.value] += 1  # a parameter is bound by the call
        plan = {}
        for name, call in partials.items():
            args = call.args[1:]
            reads = [n for a in args for n in _names_read(a.value)]
            if (bindings[name] == 1 and uses[name] == calls[name] + 1 and name not in starred and calls[name]
                    and all(isinstance(a.value, _SIMPLE) and not a.star for a in call.args)
                    and all(bindings[n] <= 1 for n in reads)):
                plan[name] = call
        return plan

    def _is_partial(self, call: cst.Call) -> bool:
        return bool(call.args) and self.scope.resolve(call.func) == "functools.partial"

    def leave_Call(self, original_node, updated_node):
        plan = self._plans[-1] if self._plans else {}
        func = original_node.func
        if not isinstance(func, cst.Name) or func.value not in plan:
            return updated_node
        partial = plan[func.value]
        given = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        positional = [a for a in partial.args[1:] if a.keyword is None]
        keywords = [a for a in partial.args[1:] if a.keyword is not None and a.keyword.value not in given]
        call_positional = [a for a in updated_node.args if a.keyword is None]
        call_keywords = [a for a in updated_node.args if a.keyword is not None]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                for a in (*positional, *call_positional, *keywords, *call_keywords)]
        self.ctx.converted_sites += 1
        return updated_node.with_changes(func=partial.args[0].value, args=args)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        plan = self._plans[-1] if self._plans else {}
        if len(original_node.body) == 1 and isinstance(original_node.body[0], cst.Assign):
            target = original_node.body[0].targets[0].target
            if isinstance(target, cst.Name) and plan.get(target.value) is original_node.body[0].value:
                return cst.RemoveFromParent()
        return updated_node


def _names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names(target.value)
    return []


def _names_read(expr: cst.BaseExpression) -> list[str]:
    """The local names an argument reads: ``device``, ``self`` of ``self.projection``."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return [expr.value] if isinstance(expr, cst.Name) else []
