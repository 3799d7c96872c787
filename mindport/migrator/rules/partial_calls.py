"""The converter rule PartialCallTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/partial_calls.md shows both."""
from __future__ import annotations

import collections

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import target_names
from mindport.migrator.walk import walk

_SIMPLE = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString)


class PartialCallTransform(Rule):
    """Inside a function, ``kernel = partial(fn, a, k=v)`` whose name is only ever called is written out at each
    call: ``kernel(x, is_query=True)`` becomes ``fn(a, x, k=v, is_query=True)``, and the binding goes.

    MindSpore's static graph (GRAPH_MODE, ``@jit``) compiles a ``functools.partial`` object called twice with
    different keywords into one call: ``create_kernel(q, is_query=True)`` and ``create_kernel(k, is_query=False)``
    both gave the second call's result, silently (performer's FAVOR+ attention: max rel 0.25 on random inputs; the
    whole model 2.6e-4). The written-out calls mean the same in Python: the partial's arguments come first, a keyword
    given at the call replaces the partial's. A binding reaches the statements after it in its block (one binding
    per branch of an ``if`` each reach their own calls); it is written out when every use it reaches is a call
    (never with ``**``) and its arguments are plain (names the function binds at most once, attributes, constants;
    no ``*``/``**``, no torch name: ``partial(nn.init.zeros_)`` and ``partial(nn.LayerNorm, eps=1e-6)`` go through
    the runtime adapter as values). A partial also passed on as a value (``map(create, xs)``) is left as written.
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
        # per enclosing function: id of each call to write out -> its partial(...) call; ids of the bindings to drop
        self._plans: list[tuple[dict[int, cst.Call], set[int]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._plans.append(self._plan(node))

    def leave_FunctionDef(self, original_node, updated_node):
        self._plans.pop()
        return updated_node

    def _plan(self, node: cst.FunctionDef) -> tuple[dict[int, cst.Call], set[int]]:
        """Each ``name = partial(...)`` with the calls of ``name`` in the statements after it in the same block (a
        later binding of the name in that block ends its reach: ``if ...: k = partial(f, ...) else: k = partial(g,
        ...)`` each reach their own branch). A name used any other way is left."""
        bindings: collections.Counter = collections.Counter()
        uses: collections.Counter = collections.Counter()
        reached: dict[int, cst.Call] = {}  # call node id -> the partial it reaches
        assigns: dict[int, str] = {}  # binding Assign id -> name
        partial_of: dict[int, cst.Call] = {}  # binding Assign id -> its partial call
        starred: set[str] = set()
        region_uses: dict[int, int] = {}  # binding Assign id -> uses of its name in the statements it reaches
        is_partial = self._is_partial

        def partial_binding(stmt) -> tuple[str, cst.Assign] | None:
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
                    and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1 \
                    and isinstance(stmt.body[0].targets[0].target, cst.Name) \
                    and isinstance(stmt.body[0].value, cst.Call) and is_partial(stmt.body[0].value):
                return stmt.body[0].targets[0].target.value, stmt.body[0]
            return None

        class Calls(cst.CSTVisitor):
            def __init__(self, name, partial):
                super().__init__()
                self.name, self.partial = name, partial

            def visit_FunctionDef(self, inner):
                return False

            def visit_Lambda(self, inner):
                return False

            def visit_Call(self, call):
                if isinstance(call.func, cst.Name) and call.func.value == self.name:
                    reached.setdefault(id(call), self.partial)

        class Visitor(cst.CSTVisitor):
            def visit_FunctionDef(self, inner):
                return inner is node  # nested functions plan for themselves

            def visit_Lambda(self, inner):
                return False

            def visit_IndentedBlock(self, block):
                body = list(block.body)
                for i, stmt in enumerate(body):
                    found = partial_binding(stmt)
                    if found is None:
                        continue
                    name, assign = found
                    assigns[id(assign)] = name
                    partial_of[id(assign)] = assign.value
                    counter = _NameCount(name)
                    for later in body[i + 1:]:
                        if (partial_binding(later) or (None,))[0] == name:
                            break
                        walk(later, Calls(name, assign.value))
                        walk(later, counter)
                    region_uses[id(assign)] = counter.count

            def visit_AssignTarget(self, target):
                for name in target_names(target.target):
                    bindings[name] += 1

            def visit_AugAssign(self, assign):
                for name in target_names(assign.target):
                    bindings[name] += 2

            def visit_For(self, loop):
                for name in target_names(loop.target):
                    bindings[name] += 2

            def visit_Call(self, call):
                if isinstance(call.func, cst.Name) and any(a.star == "**" for a in call.args):
                    starred.add(call.func.value)

            def visit_Name(self, name):
                uses[name.value] += 1

        walk(node, Visitor())
        params = node.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                bindings[p.name.value] += 1  # a parameter is bound by the call
        binding_of = {id(partial_of[a]): a for a in assigns}
        calls_of = collections.Counter(binding_of[id(partial)] for partial in reached.values())
        ok = set()
        for name in set(assigns.values()):
            mine = [a for a, n in assigns.items() if n == name]
            if bindings[name] != len(mine) or name in starred \
                    or uses[name] != len(mine) + sum(region_uses[a] for a in mine):
                continue  # bound otherwise, or read where no partial binding reaches
            for a in mine:  # each binding on its own: all its uses are calls
                call = partial_of[a]
                reads = [r for arg in call.args[1:] for r in _names_read(arg.value)]
                if (calls_of[a] and region_uses[a] == calls_of[a]
                        and all(isinstance(arg.value, _SIMPLE) and not arg.star for arg in call.args)
                        and not any(self.scope.resolve_torch(arg.value) for arg in call.args)
                        and all(bindings[r] <= 1 for r in reads)):
                    ok.add(a)
        plan = {call_id: partial for call_id, partial in reached.items() if binding_of[id(partial)] in ok}
        return plan, ok

    def _is_partial(self, call: cst.Call) -> bool:
        return bool(call.args) and self.scope.resolve(call.func) == "functools.partial"

    def leave_Call(self, original_node, updated_node):
        plan = self._plans[-1][0] if self._plans else {}
        partial = plan.get(id(original_node))
        if partial is None:
            return updated_node
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
        drop = self._plans[-1][1] if self._plans else set()
        if len(original_node.body) == 1 and id(original_node.body[0]) in drop:
            return cst.RemoveFromParent()
        return updated_node


class _NameCount(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.count = name, 0

    def visit_Name(self, node: cst.Name) -> None:
        self.count += node.value == self.name


def _names_read(expr: cst.BaseExpression) -> list[str]:
    """The local names an argument reads: ``device``, ``self`` of ``self.projection``."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return [expr.value] if isinstance(expr, cst.Name) else []
