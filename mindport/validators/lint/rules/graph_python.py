"""MS4xx, what converted models hit in GRAPH_MODE (2 of 2): Python constructs that run in PyNative but that a
compiled graph rejects (a name possibly unbound after a loop or branch, `map` over a closure, `list.pop`, `list.extend`); verified
in MindSpore 2.10 GRAPH_MODE. The calls are in graph_calls.py."""
from __future__ import annotations

import ast

from mindport.validators.lint.context import graph_nodes_of, walk_body
from mindport.validators.lint.rules.base import Rule
from mindport.validators.lint.rules.static_graph import _CELL, _JIT


class GraphPossiblyUnbound(Rule):
    """Flags a local variable of `construct` or a @jit function read where it may be unassigned: assigned only in
    some branches of an `if` (or only inside a loop) before the read.

    ## Why is this bad?
    Python only fails if the path without the assignment runs; the graph compiler rejects the function outright,
    even when the condition is a constant such as `self.flag` (measured on 2.10: "The local variable 'x1' is not
    defined in false branch, but defined in true branch", "The local variable 'out' defined in the 'for' loop body
    cannot be used outside of the loop body", "The name 'out' is not defined"). Real models do this: a first
    iteration that seeds a value (`if i == 0: x1 = conv(x)`), a result kept from the last loop iteration, a value
    assigned in one branch and read under the same condition.

    ## Fix
    Assign `name = None` at the start of the function (`--fix` does): the graph compiles, and every path that ran
    in Python gives the same result (measured on the three real models above). Or assign the value the variable
    should have on the other path.
    """

    code = "MS415"
    name = "graph-possibly-unbound"
    message = "variable may be unassigned here in a graph function"
    severity = "error"
    fixable = True
    FIXES = (
        (_CELL + "        for layer in self.layers:\n            out = layer(x)\n        return out\n",
         _CELL + "        out = None\n        for layer in self.layers:\n            out = layer(x)\n        return out\n"),
        ("from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        \"\"\"Doc.\"\"\"\n"
         "        if self.flag:\n            y = x * 2\n        return y if self.flag else x\n",
         "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        \"\"\"Doc.\"\"\"\n"
         "        y = None\n        if self.flag:\n            y = x * 2\n        return y if self.flag else x\n"),
    )
    VALID = (
        _CELL + "        out = x\n        for layer in self.layers:\n            out = layer(out)\n        return out\n",
        _CELL + "        if self.flag:\n            y = x * 2\n        else:\n            y = x\n        return y\n",
    )
    INVALID = (
        _CELL + "        for layer in self.layers:\n            out = layer(x)\n        return out\n",
        _CELL + "        for i in range(2):\n            if i == 0:\n                h = self.conv(x)\n"
        "            h = self.conv(x + h)\n        return h\n",
        _CELL + "        if self.flag:\n            y = x * 2\n        return y if self.flag else x\n",
    )

    def check(self, ctx):
        for fn in ctx.graph_functions:
            yield from _UnboundChecker(fn).run()


class _UnboundChecker:
    """Definite assignment over one function body (straight-line code, if/else, loops, with)."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        self.fn = fn
        args = fn.args
        self.params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        self.params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        self.locals = {n.id for n in walk_body(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self.locals -= self.params
        self.reported: set[str] = set()
        self.findings: list[tuple[ast.AST, str]] = []
        self.loop_only: set[str] = set()  # assigned only inside a loop body so far

    def run(self):
        self.block(self.fn.body, set(self.params))
        return self.findings

    def uses(self, node: ast.AST | None, defined: set[str]) -> None:
        if node is None:
            return
        bound_inside: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                bound_inside |= {n.id for n in ast.walk(sub) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                if isinstance(sub, ast.Lambda):
                    bound_inside |= {a.arg for a in sub.args.args}
        for sub in ast.walk(node):
            if (isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in self.locals
                    and sub.id not in defined and sub.id not in bound_inside and sub.id not in self.reported):
                self.reported.add(sub.id)
                where = "only inside a loop" if sub.id in self.loop_only else "only on some paths"
                self.findings.append((sub, f"`{sub.id}` may be unassigned here: it is assigned {where} before this "
                                           f"read; graph mode rejects `{self.fn.name}` (assign `{sub.id} = None` "
                                           f"at its start)"))

    @staticmethod
    def targets(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def block(self, body: list[ast.stmt], defined: set[str]) -> set[str] | None:
        """The names definitely assigned after ``body``; None when it never falls through."""
        defined = set(defined)
        for stmt in body:
            result = self.stmt(stmt, defined)
            if result is None:
                return None
            defined = result
        return defined

    def stmt(self, stmt: ast.stmt, defined: set[str]) -> set[str] | None:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            self.uses(getattr(stmt, "value", None) or getattr(stmt, "exc", None), defined)
            return None
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return None
        if isinstance(stmt, ast.Assign):
            self.uses(stmt.value, defined)
            for t in stmt.targets:
                self.uses_in_target(t, defined)
            return defined | set().union(*(self.targets(t) for t in stmt.targets))
        if isinstance(stmt, ast.AugAssign):
            self.uses(stmt.value, defined)
            if isinstance(stmt.target, ast.Name):
                self.uses(ast.Name(stmt.target.id, ast.Load(), lineno=stmt.lineno, col_offset=stmt.col_offset),
                          defined)
            return defined | self.targets(stmt.target)
        if isinstance(stmt, ast.AnnAssign):
            self.uses(stmt.value, defined)
            return defined | (self.targets(stmt.target) if stmt.value is not None else set())
        if isinstance(stmt, ast.If):
            self.uses(stmt.test, defined)
            branches = [self.block(stmt.body, defined), self.block(stmt.orelse, defined)]
            falling = [b for b in branches if b is not None]
            return set.intersection(*falling) if falling else None
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.uses(stmt.iter, defined)
            inner = self.targets(stmt.target)
            assigned = {n for s in stmt.body for n in self.targets(s)} - defined
            self.loop_only |= assigned
            self.block(stmt.body, defined | inner)
            after = self.block(stmt.orelse, defined)
            return defined if after is None else after
        if isinstance(stmt, ast.While):
            self.uses(stmt.test, defined)
            self.loop_only |= {n for s in stmt.body for n in self.targets(s)} - defined
            self.block(stmt.body, defined)
            after = self.block(stmt.orelse, defined)
            return defined if after is None else after
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.uses(item.context_expr, defined)
                if item.optional_vars is not None:
                    defined = defined | self.targets(item.optional_vars)
            return self.block(stmt.body, defined)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return defined | {stmt.name}
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return defined | {(a.asname or a.name).split(".")[0] for a in stmt.names}
        if isinstance(stmt, ast.Try):
            after = self.block(stmt.body, defined)
            return defined if after is None else after
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.uses(child, defined)
        return defined

    def uses_in_target(self, target: ast.AST, defined: set[str]) -> None:
        """`a[i] = v`, `a.b = v`: the container and the index are read."""
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self.uses(target.value, defined)
            if isinstance(target, ast.Subscript):
                self.uses(target.slice, defined)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.uses_in_target(elt, defined)


def _free_names(lam: ast.Lambda) -> set[str]:
    params = {a.arg for a in (*lam.args.posonlyargs, *lam.args.args, *lam.args.kwonlyargs)}
    params |= {a.arg for a in (lam.args.vararg, lam.args.kwarg) if a is not None}
    return {n.id for n in ast.walk(lam.body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - params


class GraphMapClosure(Rule):
    """Flags `map(lambda ...: ..., seq)` in `construct` or a @jit function when the lambda reads a local of the
    function (`h`, `self`): a closure.

    ## Why is this bad?
    The graph compiler rejects it: "The Map operator don't support Closure with free variable yet" (measured on
    2.10, in the conformer and Perceiver attention of real models: `q, k, v = map(lambda t: rearrange(t, ...,
    h=h), (q, k, v))`). A lambda reading only module-level names compiles.

    ## Fix
    A list comprehension, which compiles and unpacks the same way: `q, k, v = [f(t) for t in (q, k, v)]`
    (`--fix` rewrites a one-sequence `map(lambda ...)`).
    """

    code = "MS417"
    name = "graph-map-closure"
    message = "map over a closure in a graph function"
    severity = "error"
    fixable = True
    VALID = (
        _CELL + "        h = self.heads\n        q, k = [t.reshape(t.shape[0], h, -1) for t in (x, x)]\n        return q + k\n",
        "from mindspore import nn, ops\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        a, b = map(lambda t: ops.relu(t), (x, x))\n        return a + b\n",
    )
    INVALID = (
        _CELL + "        h = self.heads\n        q, k = map(lambda t: t.reshape(t.shape[0], h, -1), (x, x))\n        return q + k\n",
        _CELL + "        return tuple(map(lambda t: self.proj(t), (x, x)))\n",
    )
    FIXES = (
        (_CELL + "        h = self.heads\n        q, k = map(lambda t: t.reshape(t.shape[0], h, -1), (x, x))\n        return q + k\n",
         _CELL + "        h = self.heads\n        q, k = [t.reshape(t.shape[0], h, -1) for t in (x, x)]\n        return q + k\n"),
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "map"
                    and "map" not in ctx.aliases and "map" not in ctx.functions and node.args
                    and isinstance(node.args[0], ast.Lambda)):
                continue
            lam = node.args[0]
            args = fn.args
            local = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
            local |= {n.id for n in walk_body(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            free = sorted(_free_names(lam) & local)
            if not free:
                continue
            simple = (len(node.args) == 2 and not node.keywords and len(lam.args.args) == 1
                      and not lam.args.posonlyargs and not lam.args.kwonlyargs and not lam.args.vararg
                      and not lam.args.kwarg and not lam.args.defaults)
            yield node, (f"`map(lambda ...)` reads {', '.join(f'`{n}`' for n in free)} from `{fn.name}`: graph mode "
                         f"rejects a map over a closure; use a list comprehension"), simple


class GraphListPop(Rule):
    """Flags `list.pop()` in `construct` or a @jit function.

    ## Why is this bad?
    Under the default syntax level (LAX), an in-place `pop` of a Python list inside the loops of `construct` runs
    through MindSpore's interpreted fallback; measured on 2.10 with a real DDPM U-Net (skip connections pushed by
    the down path and popped by the up path), the compiled network fails at run time ("index 2 is out of bounds
    for dimension with size 2") while the same code compiles with the STRICT syntax level and with `h[-1]` /
    `h = h[:-1]`.

    ## Fix
    Read the last item and drop it by slicing: `s = h[-1]` then `h = h[:-1]`.
    """

    code = "MS419"
    name = "graph-list-pop"
    message = "list.pop() in a graph function"
    VALID = (
        _CELL + "        h = [x]\n        for m in self.down:\n            x = m(x)\n            h.append(x)\n"
        "        for m in self.up:\n            s = h[-1]\n            h = h[:-1]\n            x = m(x + s)\n        return x\n",
        "from mindspore import nn\n\ndef host(items):\n    return items.pop()\n",
    )
    INVALID = (
        _CELL + "        h = [x]\n        for m in self.down:\n            x = m(x)\n            h.append(x)\n"
        "        for m in self.up:\n            x = m(x + h.pop())\n        return x\n",
        _JIT + "    stack = [x, x * 2]\n    top = stack.pop()\n    return top + stack[0]\n",
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop"
                    and isinstance(node.func.value, ast.Name) and not node.args and not node.keywords
                    and ctx.resolve(node.func.value) is None):
                yield node, (f"`{node.func.value.id}.pop()` in `{fn.name}`: in-place list ops in graph loops run "
                             f"interpreted and can fail at run time; use `{node.func.value.id}[-1]` then "
                             f"`{node.func.value.id} = {node.func.value.id}[:-1]`")



class GraphListExtend(Rule):
    """Flags `list.extend(...)` in `construct` or a @jit function.

    ## Why is this bad?
    Measured on MindSpore 2.10 GRAPH_MODE: after `ss.extend([s, t])`, a multi-output op on a tensor computed from
    `ss` (`z, r = ops.split(g, 8, axis=-1)` with `g = ops.cat([... for t in ss], axis=-1)`; also `chunk`,
    `unstack`, `topk`, unpacked or indexed) gives `r = z[1]`, a row of the first output, where PyNative gives the
    second chunk. No error: MegaCRN's port was max rel 1.18 off torch in GRAPH_MODE and 1.6e-6 in PyNative. The
    converter re-binds lists a model method builds itself (`ListExtendTransform`); this flags what it leaves
    (a list handed in or stored elsewhere, code written for MindSpore).

    ## Fix
    Concatenate and re-bind: `ss = ss + list(items)` (or `ss += items`), which compiles to the same list.
    """

    code = "MS423"
    name = "graph-list-extend"
    message = "list.extend() in a graph function"
    VALID = (
        _CELL + "        ss = []\n        for s in (x, x * 2):\n            ss = ss + [s, s * 3]\n"
        "        return ss[0] + ss[-1]\n",
        "from mindspore import nn\n\ndef host(items, more):\n    items.extend(more)\n    return items\n",
    )
    INVALID = (
        _CELL + "        ss = []\n        for s in (x, x * 2):\n            ss.extend([s, s * 3])\n"
        "        return ss[0] + ss[-1]\n",
        _JIT + "    ss = [x]\n    ss.extend([x * 2])\n    return ss[0] + ss[1]\n",
    )

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "extend"
                    and isinstance(node.func.value, ast.Name) and len(node.args) == 1 and not node.keywords
                    and ctx.resolve(node.func.value) is None):
                name = node.func.value.id
                yield node, (f"`{name}.extend(...)` in `{fn.name}`: a static graph can then read the outputs of a "
                             f"split/chunk/unstack/topk of a tensor built from `{name}` wrong (other numbers, "
                             f"silently); use `{name} = {name} + list(...)`")


class GraphDroppedCalls(Rule):
    """Flags an expression statement in `construct` or a @jit function that runs calls inside a display, a
    comprehension, a conditional expression or a short-circuit test: `row.append(i), col.append(j)`,
    `[parts.append(f(x)) for x in xs]`, `row.append(i) if i else None`, `i > 1 and row.append(i)`, `not f(x)`.

    ## Why is this bad?
    Measured on MindSpore 2.10 GRAPH_MODE: the graph evaluates such a statement as a value nobody reads and drops
    the calls in it, silently. The lists stay empty until something indexes with them ("The sequence
    element(tuple/list) in tuple index can't be empty": torchfm's product networks), or the numbers differ. PyNative
    runs the calls. The converter writes these statements out (`DisplayStatementTransform`); this flags code written
    for MindSpore, or a form the converter left.

    ## Fix
    One statement per call, a `for` loop for a comprehension, an `if` statement for a condition.
    """

    code = "MS424"
    name = "graph-dropped-calls"
    message = "calls in an expression statement a graph drops"
    VALID = (
        _CELL + "        row = []\n        for i in range(3):\n            row.append(i)\n        return x[:, row]\n",
        "def host(row, col):\n    row.append(1), col.append(2)\n    return row, col\n",
    )
    INVALID = (
        _CELL + "        row, col = [], []\n        for i in range(3):\n            row.append(i), col.append(i)\n"
        "        return x[:, row] + x[:, col]\n",
        _CELL + "        row = []\n        for i in range(3):\n            row.append(i) if i > 0 else None\n"
        "        return x[:, row]\n",
        _JIT + "    parts = []\n    [parts.append(x * k) for k in range(2)]\n    return parts[0]\n",
    )

    _FORMS = (ast.Tuple, ast.List, ast.ListComp, ast.SetComp, ast.IfExp, ast.BoolOp, ast.UnaryOp)

    def check(self, ctx):
        for fn, node in graph_nodes_of(ctx):
            if isinstance(node, ast.Expr) and isinstance(node.value, self._FORMS) \
                    and any(isinstance(sub, ast.Call) for sub in ast.walk(node.value)):
                yield node, (f"the calls in this statement of `{fn.name}` are dropped by a static graph (the "
                             f"statement is evaluated as a value nobody reads): write one statement per call, a "
                             f"`for` loop or an `if` statement")


def _reads_item(node: ast.AST, names: set[str]) -> bool:
    """Does the expression read a tensor's value on the host: ``.item()``, ``.tolist()``, ``int(t)``/``float(t)``
    of a subscript or call, or a name bound from one of those?"""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("item", "tolist"):
            return True
        if isinstance(sub, ast.Name) and sub.id in names:
            return True
    return False


class GraphDataDependentIndex(Rule):
    """Flags a layer container of the Cell indexed, in `construct` or a @jit function, by a value read from a tensor
    (`self.experts[int(e.item())]`, `expert_id = int(t.item()); self.fc1[expert_id](x)`).

    ## Why is this bad?
    Mixture-of-experts layers loop over the experts a router picked and call each by its id. In PyNative that is
    Python; a static graph has no value for the id when it compiles: measured on 2.10, rasbt's Qwen3 MoE compiled
    and gave other numbers than PyNative (max rel 0.12, no error at all), and a GPT MoE variant did not compile.

    ## Fix
    Run the Cell in PyNative mode, or compute every expert and combine with the routing weights (a dense mixture,
    `sum(w[..., i] * expert(x) for i, expert in enumerate(self.experts))`), which a graph compiles.
    """

    code = "MS421"
    name = "graph-data-dependent-index"
    message = "layer container indexed by a tensor value in a graph function"
    severity = "error"
    VALID = (
        _CELL + "        out = 0\n        for i, expert in enumerate(self.experts):\n"
        "            out = out + expert(x) * i\n        return out\n",
        "from mindspore import nn\n\ndef host(self, t):\n    return self.experts[int(t.item())]\n",
    )
    INVALID = (
        _CELL + "        for e in x.unique():\n            eid = int(e.item())\n"
        "            x = self.experts[eid](x)\n        return x\n",
        _CELL + "        return self.experts[int(x.argmax().item())](x)\n",
    )

    def check(self, ctx):
        for fn in ctx.graph_functions:
            host_values = set()
            nodes = list(walk_body(fn))
            for node in nodes:
                if isinstance(node, ast.Assign) and _reads_item(node.value, set()):
                    host_values |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            for node in nodes:
                if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
                        and isinstance(node.value.value, ast.Name) and node.value.value.id == "self"
                        and _reads_item(node.slice, host_values)):
                    yield node, (f"`{ast.unparse(node)}` in `{fn.name}`: the index is read from a tensor's value, "
                                 f"which a static graph does not have when it compiles (a MoE loop gave other "
                                 f"numbers, silently); run this Cell in PyNative or combine all experts densely")


class GraphAttributeState(Rule):
    """Flags state stored on ``self`` in a Cell's ``construct`` or a method it calls (``self.mean = x.mean(...)``
    in RevIN's statistics step, Koopa's ``self.K = torch.linalg.lstsq(x, y).solution``), unless the attribute is a
    Parameter.

    ## Why is this bad?
    A static graph does not keep Python state on the Cell: the compiler reads ``self.mean`` as the value the
    attribute held when the graph was built. Measured on 2.10: an attribute set to a tensor in ``__init__`` and
    overwritten in ``construct`` compiled and gave other numbers than PyNative (max abs 0.89, no error); set to None
    there, or never set, the compile fails ('object has no attribute 'mean'', 'sub(None)').

    ## Fix
    Return the value and pass it on (``x, mean, std = self.norm(x)`` ... ``self.denorm(y, mean, std)``), keep it
    in a Parameter updated with ``ops.assign`` (a fixed shape), or run the Cell in PyNative mode.
    """

    code = "MS422"
    name = "graph-attribute-state"
    message = "state stored on self in a graph function"
    severity = "error"
    VALID = (
        _CELL + "        mean = x.mean(axis=1, keep_dims=True)\n        return x - mean\n",
        "import mindspore as ms\nfrom mindspore import nn\n\nclass Net(nn.Cell):\n    def __init__(self):\n"
        "        super().__init__()\n        self.steps = ms.Parameter(ms.Tensor(0.0), requires_grad=False)\n"
        "    def construct(self, x):\n        self.steps = self.steps + 1\n        return x\n",
        "from mindspore import nn\n\nclass Net(nn.Cell):\n    def remember(self, x):\n        self.last = x\n"
        "    def construct(self, x):\n        return x\n",
    )
    INVALID = (
        _CELL + "        self.mean = x.mean(axis=1, keep_dims=True)\n        return x - self.mean\n",
        "from mindspore import nn\n\nclass RevIN(nn.Cell):\n    def stats(self, x):\n"
        "        self.mean = x.mean(axis=1, keep_dims=True)\n    def construct(self, x):\n"
        "        self.stats(x)\n        return x - self.mean\n",
    )

    def check(self, ctx):
        for cls in ctx.cell_classes.values():
            methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            if "construct" not in methods:
                continue
            parameters = {t.attr for m in methods.values() if m.name == "__init__" for node in ast.walk(m)
                          if isinstance(node, ast.Assign) and ctx.is_parameter_call(node.value)
                          for t in node.targets if _self_attribute(t)}
            reached, todo = set(), ["construct"]
            while todo:  # construct and the methods it calls on self, transitively
                name = todo.pop()
                if name in reached or name not in methods:
                    continue
                reached.add(name)
                todo += [n.func.attr for n in walk_body(methods[name])
                         if isinstance(n, ast.Call) and _self_attribute(n.func)]
            for name in sorted(reached):
                for node in walk_body(methods[name]):
                    targets = node.targets if isinstance(node, ast.Assign) else \
                        [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                    for target in targets:
                        if _self_attribute(target) and target.attr not in parameters:
                            where = "`construct`" if name == "construct" else f"`{name}` (compiled with construct)"
                            yield target, (f"`self.{target.attr} = ...` in {where}: a static graph keeps no "
                                           f"state on self, later reads see the value it held when the graph was "
                                           f"built (other numbers, silently) or fail; return it and pass it on, "
                                           f"keep it in a Parameter, or run this Cell in PyNative")


def _self_attribute(node) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
