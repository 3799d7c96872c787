"""The converter rule ArgumentWriteTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/argument_writes.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import target_names
from mindport.migrator.walk import walk

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_ENTRY_NAMES = frozenset({"__init__", "forward", "construct", "__call__"})


class ArgumentWriteTransform(Rule):
    """A helper that writes into a tensor its caller handed it (``def _mark(self, h, k): h[:, k] = 0`` called as
    ``self._mark(h, 1)``; ``def fill_head(buf, v): buf[:, 0] = v``; ``h[0] += 1``, ``h.add_(x)``) gives that tensor
    back, and each call binds it again: ``return h`` at the end of the helper (and at each bare ``return``), and
    ``h = self._mark(h, 1)`` at the call (``a, b = f(a, b)`` when it writes two).

    In torch the write changes the caller's tensor. MindSpore's PyNative does too (an item write and the runtime's
    in-place helpers write the same object), but a static graph (GRAPH_MODE, ``@jit``) inlines the helper and gives
    the write a new value the caller never sees: the caller reads the tensor as it was, with no error (measured on
    MindSpore 2.10: 5.2 off after ``self._mark(h, 1); fill_head(h, 2.0)``, 0.0 in PyNative). Returned and bound
    again, the written tensor is the caller's in both modes; PyNative binds the very object it already had.

    Only a helper of the file (a module function, or a method of the class calling it as ``self.helper(...)``) that
    returns no value and never binds the written parameter to anything else (``p = ...``, ``p += ...``: a number's
    ``+=`` makes a new object in torch too), called as a statement of its own with a plain name in that argument. A
    helper's call of another such helper with its own parameter counts as a write of that parameter. What cannot be
    bound again keeps its torch meaning and is said (MP107): a helper that also returns another value, a call inside an
    expression or with another expression as the argument (``f(self.buf)``, ``f(h[0])``), a parameter bound again,
    a method that also writes ``self`` (SelfCacheTransform's) or that another class of the file defines too (an
    override would give back nothing). A helper whose every ``return`` already gives the written parameter back
    (Informer's ``_update_context``: ``return (context_in, attn)``) is left as written, and only a call that does not
    bind it again to the name it handed in (``context, attn = self._update_context(context, ...)`` does) is said.
    ``forward``, ``__init__`` and methods with decorators are left alone (``forward``'s callers are sub-Cell calls).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                def fill_head(buf, v):
                    buf[:, 0] = v


                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 4)

                    def _mark(self, h, k):
                        h[:, k] = 0.0
                        fill_head(h, 1.0)

                    def forward(self, x):
                        h = self.fc(x)
                        self._mark(h, 1)
                        return h * 2
            """,
            after="""
                from mindspore import nn


                def fill_head(buf, v):
                    buf[:, 0] = v
                    return buf


                class Net(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=4)

                    def _mark(self, h, k):
                        h[:, k] = 0.0
                        h = fill_head(h, 1.0)
                        return h

                    def construct(self, x):
                        h = self.fc(x)
                        h = self._mark(h, 1)
                        return h * 2
            """,
            note="A helper writing into its caller's tensor gives it back and the caller binds it: a static graph "
                 "keeps the write.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                def scatter_into(out, idx, v):
                    out[idx] = v
                    return out.sum()


                class Net(nn.Module):
                    def forward(self, x):
                        h = x * 2
                        s = scatter_into(h, 0, 1.0)
                        return h + s
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import math as mp_math


                def scatter_into(out, idx, v):
                    out[idx] = v  # mindport: MP107 scatter_into writes into its argument out and returns a value: a static graph (GRAPH_MODE) does not carry the write back to the caller
                    return mp_math.sum(out)


                class Net(nn.Cell):
                    def construct(self, x):
                        h = x * 2
                        s = scatter_into(h, 0, 1.0)
                        return h + s
            """,
            note="A helper that also returns a value is said: its write reaches the caller in PyNative only.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._returns: dict[int, list[str]] = {}  # id of a helper -> the parameters it now returns
        self._calls: dict[int, list[str]] = {}  # id of a statement calling one -> the names bound again
        self._remarks: dict[int, str] = {}  # id of a statement -> MP107 message
        self._depth = 0

    def visit_Module(self, node: cst.Module) -> None:
        _Plan(node, self._returns, self._calls, self._remarks).make()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        message = self._remarks.pop(id(node), None)
        if message is not None:
            self.remark(node, "MP107", message)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        names = self._calls.get(id(original_node))
        if not names or len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.Expr):
            return updated_node
        self.ctx.converted_sites += 1
        target = cst.Name(names[0]) if len(names) == 1 else \
            cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
        return updated_node.with_changes(body=[cst.Assign([cst.AssignTarget(target)], updated_node.body[0].value)])

    def leave_FunctionDef(self, original_node, updated_node):
        names = self._returns.get(id(original_node))
        if not names or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        value = cst.Name(names[0]) if len(names) == 1 else \
            cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
        body = _BareReturns(value).run(updated_node.body)
        statements = list(body.body)
        if not _ends_in_return(statements):
            statements.append(cst.SimpleStatementLine([cst.Return(value)]))
        self.ctx.converted_sites += 1
        return updated_node.with_changes(body=body.with_changes(body=statements))


class _BareReturns(cst.CSTTransformer):
    """``return`` (no value) in the helper itself (not a nested function) -> ``return <written parameters>``."""

    def __init__(self, value) -> None:
        super().__init__()
        self.value = value

    def run(self, body):
        return body.visit(self)

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def leave_Return(self, original_node, updated_node):
        if updated_node.value is not None:
            return updated_node
        return updated_node.with_changes(value=self.value, whitespace_after_return=cst.SimpleWhitespace(" "))


def _ends_in_return(statements) -> bool:
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)


class _Helper:
    def __init__(self, fn: cst.FunctionDef, params: list[str], owner: str | None) -> None:
        self.fn = fn
        self.params = params  # positional parameters after self
        self.owner = owner  # the class name for a method, None for a module function
        self.written: set[str] = set()  # parameters written in place
        self.first: dict[str, cst.CSTNode] = {}  # parameter -> the first statement writing it
        self.rebound = _rebound(fn)
        self.returns_value = _returns_value(fn)
        self.gives_back = _given_back(fn) if self.returns_value else set()  # every return hands these back
        self.writes_self = owner is not None and _writes_self(fn)  # SelfCacheTransform may thread it: left
        self.overridden = False


class _Plan:
    def __init__(self, module: cst.Module, returns, calls, remarks) -> None:
        self.module = module
        self.returns = returns
        self.calls = calls
        self.remarks = remarks
        self.functions: dict[str, _Helper] = {}  # module functions by name
        self.methods: dict[tuple[str, str], _Helper] = {}  # (class, method) -> helper

    def make(self) -> None:
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef) and _plain(stmt):
                self.functions[stmt.name.value] = _Helper(stmt, _params(stmt, 0), None)
            elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                for s in stmt.body.body:
                    if isinstance(s, cst.FunctionDef) and _plain(s) and s.name.value not in _ENTRY_NAMES \
                            and s.params.params and s.params.params[0].name.value == "self":
                        self.methods[(stmt.name.value, s.name.value)] = _Helper(s, _params(s, 1), stmt.name.value)
        defined: dict[str, int] = {}  # method name -> how many classes of the file define it
        for stmt in self.module.body:
            if isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                for name in {s.name.value for s in stmt.body.body if isinstance(s, cst.FunctionDef)}:
                    defined[name] = defined.get(name, 0) + 1
        for helper in self.methods.values():
            helper.overridden = defined.get(helper.fn.name.value, 0) > 1  # an override would return no tensor
        helpers = [*self.functions.values(), *self.methods.values()]
        for helper in helpers:
            for stmt, name in _direct_writes(helper.fn, set(helper.params)):
                helper.written.add(name)
                helper.first.setdefault(name, stmt)
        changed = True
        while changed:  # a helper handing its own parameter to a writing helper writes it too
            changed = False
            for helper in helpers:
                for stmt, call, callee in self._calls_in(helper.fn, helper.owner):
                    for name in self._bound_args(call, callee) or ():
                        if name in helper.params and name not in helper.written:
                            helper.written.add(name)
                            helper.first.setdefault(name, stmt)
                            changed = True
        reached = self._reached()
        helpers = [h for h in helpers if id(h.fn) in reached]  # what only __init__ or Python code calls runs as Python
        good = {id(h) for h in helpers if h.written and not h.returns_value and not (h.written & h.rebound)
                and not h.writes_self and not h.overridden}
        handing = {id(h) for h in helpers if h.written and h.returns_value and h.written <= h.gives_back
                   and not (h.written & h.rebound)}  # the caller can bind what it gets back: see its calls
        for helper in helpers:
            if not helper.written or id(helper) in handing:
                continue
            if id(helper) in good:
                self.returns[id(helper.fn)] = [p for p in helper.params if p in helper.written]
                continue
            name = helper.fn.name.value
            param = sorted(helper.written)[0]
            why = "returns a value" if helper.returns_value else "writes self as well" if helper.writes_self \
                else "another class of the file defines it too" if helper.overridden \
                else f"binds {param} to another value as well"
            self.remarks.setdefault(id(helper.first[param]), (
                f"{name} writes into its argument {param} and {why}: a static graph (GRAPH_MODE) does not carry the "
                f"write back to the caller"))
        # the call sites: every call of a good helper in the file
        for fn, owner in self._all_functions():
            if id(fn) not in reached:
                continue
            for stmt, call, callee in self._calls_in(fn, owner, statements_only=False):
                if id(callee) in handing:
                    line = self._line_of(fn, call)
                    names = self._bound_args(call, callee)
                    bound = set()
                    if line is not None and len(line.body) == 1 and isinstance(line.body[0], cst.Assign) \
                            and line.body[0].value is call:
                        for target in line.body[0].targets:
                            bound.update(target_names(target.target))
                    if line is not None and (names is None or not set(names) <= bound):
                        self.remarks.setdefault(id(line), (
                            f"{callee.fn.name.value} writes into the argument it is handed here and gives it back, "
                            f"but this call does not bind it again: a static graph (GRAPH_MODE) does not carry the "
                            f"write back"))
                    continue
                if id(callee) not in good:
                    continue
                names = self._bound_args(call, callee)
                if stmt is not None and names is not None:
                    self.calls[id(stmt)] = names
                else:
                    anchor = stmt if stmt is not None else self._line_of(fn, call)
                    if anchor is not None:
                        self.remarks.setdefault(id(anchor), (
                            f"{callee.fn.name.value} writes into the argument it is handed here, which cannot be bound "
                            f"again: a static graph (GRAPH_MODE) does not carry the write back"))

    def _reached(self) -> set[int]:
        """Ids of the methods of a class that no code of the file calls as ``self.<name>(...)`` (``forward``, a
        public ``generate``) but ``__init__``, and of the functions they call, at any depth: the code a static graph
        may compile. A method only ``__init__`` calls runs in Python."""
        called: set[tuple[str, str]] = set()
        for fn, owner in self._all_functions():
            if owner is None:
                continue

            class Calls(cst.CSTVisitor):
                def visit_Call(self, call: cst.Call) -> None:
                    func = call.func
                    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                            and func.value.value == "self":
                        called.add((owner, func.attr.value))

            walk(fn, Calls())
        todo = [(fn, owner) for fn, owner in self._all_functions() if owner is not None and fn.name.value != "__init__"
                and (fn.name.value in _ENTRY_NAMES or (owner, fn.name.value) not in called)]
        seen = {id(fn) for fn, _ in todo}
        plan = self
        while todo:
            fn, owner = todo.pop()
            found = []

            class Visitor(cst.CSTVisitor):
                def visit_Call(self, call: cst.Call) -> None:
                    func = call.func
                    if isinstance(func, cst.Name) and func.value in plan.functions:
                        found.append((plan.functions[func.value].fn, None))
                    elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                            and func.value.value == "self" and (owner, func.attr.value) in plan.methods:
                        found.append((plan.methods[(owner, func.attr.value)].fn, owner))

            walk(fn, Visitor())
            for callee, callee_owner in found:
                if id(callee) not in seen:
                    seen.add(id(callee))
                    todo.append((callee, callee_owner))
        return seen

    def _all_functions(self):
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef):
                yield stmt, None
            elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                for s in stmt.body.body:
                    if isinstance(s, cst.FunctionDef):
                        yield s, stmt.name.value

    def _callee(self, call: cst.Call, owner: str | None) -> _Helper | None:
        func = call.func
        if isinstance(func, cst.Name):
            return self.functions.get(func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                and owner is not None:
            return self.methods.get((owner, func.attr.value))
        return None

    def _calls_in(self, fn: cst.FunctionDef, owner, statements_only: bool = True):
        """(statement or None, call, helper) for the calls of writing helpers in fn (not its nested functions):
        the statement when the call is a statement of its own."""
        found = []
        plan = self

        class Visitor(_OwnLines):

            def visit_Call(self, call: cst.Call) -> None:
                callee = plan._callee(call, owner)
                if callee is None or not callee.written:
                    return
                line = self.line
                alone = line is not None and len(line.body) == 1 and isinstance(line.body[0], cst.Expr) \
                    and line.body[0].value is call
                if alone or not statements_only:
                    found.append((line if alone else None, call, callee))

        walk(fn, Visitor(fn))
        return found

    def _line_of(self, fn, call):
        found = []

        class Visitor(cst.CSTVisitor):
            def __init__(self) -> None:
                self.line = None

            def visit_SimpleStatementLine(self, node) -> None:
                self.line = node

            def visit_Call(self, node) -> None:
                if node is call:
                    found.append(self.line)

        walk(fn, Visitor())
        return found[0] if found else None

    @staticmethod
    def _bound_args(call: cst.Call, callee: _Helper) -> list[str] | None:
        """The caller's names at the written parameters, in the helper's order; None when one is no plain name."""
        if any(arg.star for arg in call.args):
            return None
        given: dict[str, cst.BaseExpression] = {}
        position = 0
        for arg in call.args:
            if arg.keyword is not None:
                given[arg.keyword.value] = arg.value
            else:
                if position < len(callee.params):
                    given[callee.params[position]] = arg.value
                position += 1
        names = []
        for param in callee.params:
            if param not in callee.written:
                continue
            value = given.get(param)
            if not isinstance(value, cst.Name) or value.value in ("self", "None", "True", "False"):
                return None
            names.append(value.value)
        return names


def _plain(fn: cst.FunctionDef) -> bool:
    return not fn.decorators and not fn.asynchronous and not (fn.name.value.startswith("__")
                                                              and fn.name.value.endswith("__"))


def _params(fn: cst.FunctionDef, skip: int) -> list[str]:
    params = [*fn.params.posonly_params, *fn.params.params][skip:]
    return [p.name.value for p in params]



class _OwnLines(cst.CSTVisitor):
    """Walks a function's own statements (not its nested functions or classes); ``line`` is the simple statement
    line being visited."""

    def __init__(self, fn: cst.FunctionDef) -> None:
        self.fn, self.line = fn, None

    def on_visit(self, node) -> bool:
        return super().on_visit(node) and (node is self.fn or not isinstance(node, _NESTED))

    def visit_SimpleStatementLine(self, node) -> None:
        self.line = node

def _root(node) -> str | None:
    """The name a subscript chain writes into (``p[i]``, ``p[i][j]``, ``p[:, k]``)."""
    if not isinstance(node, cst.Subscript):
        return None
    while isinstance(node, cst.Subscript):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _direct_writes(fn: cst.FunctionDef, params: set[str]):
    """(statement, parameter) for an item write into a parameter (``p[i] = v``, ``p[i] += v``) or an in-place
    method called on it as a statement (``p.add_(x)``, ``p[:, 0].zero_()``)."""
    found = []

    class Visitor(_OwnLines):

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                name = _root(target.target)
                if name in params:
                    found.append((self.line, name))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            name = _root(node.target)
            if name in params:
                found.append((self.line, name))

        def visit_Expr(self, node: cst.Expr) -> None:
            call = node.value
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
                method = call.func.attr.value
                receiver = call.func.value
                name = receiver.value if isinstance(receiver, cst.Name) else _root(receiver)
                if name in params and method.endswith("_") and not method.startswith("_"):
                    found.append((self.line, name))

    walk(fn, Visitor(fn))
    return found


def _rebound(fn: cst.FunctionDef) -> set[str]:
    """Names the function binds (not its nested functions): ``p = ...``, ``p += ...``, a for target, ``as p``."""
    names: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            return super().on_visit(node) and (node is fn or not isinstance(node, _NESTED))

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            names.update(target_names(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name):
                names.add(node.target.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            names.update(target_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            names.update(target_names(node.target))

        def visit_AsName(self, node: cst.AsName) -> None:
            names.update(target_names(node.name))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            names.update(target_names(node.target))

        def visit_Del(self, node) -> None:
            names.update(target_names(node.target))

    walk(fn, Visitor())
    return names


def _writes_self(fn: cst.FunctionDef) -> bool:
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            target = node.target
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                    and target.value.value == "self":
                found.append(node)

    walk(fn, Visitor())
    return bool(found)


def _given_back(fn: cst.FunctionDef) -> set[str]:
    """The names every ``return`` of the function (not its nested functions) gives back, alone or in a tuple
    (``return context_in, attn``)."""
    given: list[set[str]] = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            return super().on_visit(node) and (node is fn or not isinstance(node, _NESTED))

        def visit_Return(self, node: cst.Return) -> None:
            value = node.value
            if isinstance(value, cst.Name):
                given.append({value.value})
            elif isinstance(value, cst.Tuple):
                given.append({e.value.value for e in value.elements if isinstance(e.value, cst.Name)})
            else:
                given.append(set())

    walk(fn, Visitor())
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else []
    if not given or not _ends_in_return(list(body)):
        return set()
    return set.intersection(*given)


def _returns_value(fn: cst.FunctionDef) -> bool:
    found = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            return super().on_visit(node) and (node is fn or not isinstance(node, _NESTED))

        def visit_Return(self, node: cst.Return) -> None:
            if node.value is not None and not (isinstance(node.value, cst.Name) and node.value.value == "None"):
                found.append(node)

        def visit_Yield(self, node) -> None:
            found.append(node)

    walk(fn, Visitor())
    return bool(found)
