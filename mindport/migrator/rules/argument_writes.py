"""The converter rule ArgumentWriteTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/argument_writes.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import argument_never_reaches
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import dotted_name
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
    ``__init__`` and methods with decorators are left alone.

    A layer's ``forward`` writing its own input (``def forward(self, t): t[:, 0] = 0; t.add_(1)``, or handing it to
    such a helper or sub-layer) is the same write one level up: the layer holding it as ``self.clear = Clear()`` calls
    ``self.clear(y)`` and reads ``y`` after (lost in a graph and in an exported MindIR, 12.4 off on MindSpore 2.10
    where PyNative matches). When every call of the layer is known (an attribute of a class of the file, called as a
    statement or one assignment), its ``forward`` gives the written inputs back (``return t``, or ``return v, t``
    after the value it returned) and each call binds them again (``y = self.clear(y)``, ``s, y = self.norm(y)``). A
    layer built where its calls cannot be followed (``nn.ModuleList([Clear()])``, a local, a subclass's
    ``super().forward``) is said (MP107). A layer nothing in the file builds (the model itself) is left as written.

    Only a write someone reads again matters: a call whose written argument the caller never reads after it (not
    later in the function, not in a loop around the call, no parameter of the caller, no view or other name of
    another tensor) is neither rewritten for a layer nor said for a helper.
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
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Clear(nn.Module):
                    def forward(self, t):
                        t[:, 0] = 0.0


                class Norm(nn.Module):
                    def forward(self, h):
                        h.mul_(2.0)
                        return h.sum(-1)


                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.clear = Clear()
                        self.norm = Norm()

                    def forward(self, x):
                        y = x * 3
                        self.clear(y)
                        s = self.norm(y)
                        return y + s[:, None]
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import math as mp_math


                class Clear(nn.Cell):
                    def construct(self, t):
                        t[:, 0] = 0.0
                        return t


                class Norm(nn.Cell):
                    def construct(self, h):
                        h = mp_inplace.mul_(h, other=2.0)
                        return mp_math.sum(h, dim=-1), h


                class Net(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.clear = Clear()
                        self.norm = Norm()

                    def construct(self, x):
                        y = x * 3
                        y = self.clear(y)
                        s, y = self.norm(y)
                        return y + s[:, None]
            """,
            note="Sub-layers writing the input their parent reads again give it back after their output, and the "
                 "parent's calls bind it.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._returns: dict[int, list[str]] = {}  # id of a helper -> the parameters it now returns
        self._calls: dict[int, list[str]] = {}  # id of a statement calling one -> the names bound again
        self._remarks: dict[int, str] = {}  # id of a statement -> MP107 message
        self._appends: set[int] = set()  # ids of layer forwards whose returns get the written inputs appended
        self._appending: set[int] = set()  # ids of statements binding a layer's output and its written inputs
        self._depth = 0

    def visit_Module(self, node: cst.Module) -> None:
        options = self.ctx.options
        plan = _Plan(node, self._returns, self._calls, self._remarks, exported=options.imported_names,
                     imported=_imported_writers(node, options.argument_writers, options.local_packages))
        plan.appends, plan.appending = self._appends, self._appending
        plan.make()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        message = self._remarks.pop(id(node), None)
        if message is not None:
            self.remark(node, "MP107", message)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        names = self._calls.get(id(original_node))
        if not names or len(updated_node.body) != 1:
            return updated_node
        small = updated_node.body[0]
        if id(original_node) in self._appending:  # a layer returning (its output, the written inputs)
            if isinstance(small, cst.Expr):
                first = cst.Name("_")
            elif isinstance(small, cst.Assign) and len(small.targets) == 1:
                first = small.targets[0].target
                if isinstance(first, (cst.Tuple, cst.List)) and not first.lpar:
                    first = first.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            else:
                return updated_node
            self.ctx.converted_sites += 1
            target = cst.Tuple([cst.Element(first), *(cst.Element(cst.Name(n)) for n in names)], lpar=[], rpar=[])
            return updated_node.with_changes(body=[cst.Assign([cst.AssignTarget(target)], small.value)])
        if not isinstance(small, cst.Expr):
            return updated_node
        self.ctx.converted_sites += 1
        target = cst.Name(names[0]) if len(names) == 1 else \
            cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
        return updated_node.with_changes(body=[cst.Assign([cst.AssignTarget(target)], small.value)])

    def leave_FunctionDef(self, original_node, updated_node):
        names = self._returns.get(id(original_node))
        if not names or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        if id(original_node) in self._appends:  # return v -> return v, <written inputs>
            self.ctx.converted_sites += 1
            return updated_node.with_changes(body=_ValueReturns(names).run(updated_node.body))
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


class _ValueReturns(_BareReturns):
    """``return v`` in a layer's forward itself -> ``return v, <written inputs>``."""

    def __init__(self, names) -> None:
        super().__init__(None)
        self.names = names

    def leave_Return(self, original_node, updated_node):
        value = updated_node.value
        if isinstance(value, (cst.Tuple, cst.NamedExpr)) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated_node.with_changes(value=cst.Tuple(
            [cst.Element(value), *(cst.Element(cst.Name(n)) for n in self.names)], lpar=[], rpar=[]))


def _returns_only(fn: cst.FunctionDef, name: str) -> bool:
    """Every return of fn (not of its nested functions) is ``return <name>``, and its body ends in one."""
    other = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            return super().on_visit(node) and (node is fn or not isinstance(node, _NESTED))

        def visit_Return(self, node: cst.Return) -> None:
            if not (isinstance(node.value, cst.Name) and node.value.value == name):
                other.append(node)

    walk(fn, Visitor())
    return not other and _always_returns(fn)


def _always_returns(fn: cst.FunctionDef) -> bool:
    """Every return of fn (not of its nested functions) gives a value and its body ends in one."""
    bare = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            return super().on_visit(node) and (node is fn or not isinstance(node, _NESTED))

        def visit_Return(self, node: cst.Return) -> None:
            if node.value is None:
                bare.append(node)

    walk(fn, Visitor())
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else []
    return not bare and _ends_in_return(list(body))


_VIEWS = frozenset({"view", "reshape", "transpose", "permute", "narrow", "select", "expand", "expand_as", "squeeze",
                    "unsqueeze", "t", "flatten", "unflatten", "view_as", "diagonal", "as_strided", "movedim",
                    "swapaxes", "swapdims", "detach", "contiguous", "chunk", "split", "unbind", "tensor_split",
                    "unfold", "real", "imag", "mT", "T"})


def _read_after(fn: cst.FunctionDef, line, name: str) -> bool:
    """Whether fn may read ``name`` (or a tensor sharing its memory) after ``line``: a read of it later in fn, or
    anywhere in a loop holding the line, or name is a parameter of fn, or fn binds it as another tensor's view or
    name (``h = x[:, :2]``, ``h = x``, ``a, b = x.chunk(2)``, a for target); ``a, b = self.f(x)`` is not one."""
    if line is None:
        return True
    if name in {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)} \
            or (isinstance(fn.params.star_arg, cst.Param) and fn.params.star_arg.name.value == name):
        return True
    state = {"after": False, "loops": [], "live": False}

    class Visitor(cst.CSTVisitor):
        def visit_For(self, node) -> None:
            state["loops"].append(node)
            if name in target_names(node.target):
                state["live"] = True

        def leave_For(self, node) -> None:
            state["loops"].pop()

        def visit_While(self, node) -> None:
            state["loops"].append(node)

        def leave_While(self, node) -> None:
            state["loops"].pop()

        def leave_SimpleStatementLine(self, node) -> None:
            if node is line:
                state["after"] = True
                for loop in state["loops"]:
                    if _reads(loop, name, None):
                        state["live"] = True

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if name in target_names(target.target) and _aliases(node.value):
                    state["live"] = True

        def visit_AnnAssign(self, node) -> None:
            if node.value is not None and isinstance(node.target, cst.Name) and node.target.value == name \
                    and _aliases(node.value):
                state["live"] = True

        def visit_Name(self, node: cst.Name) -> None:
            if state["after"] and node.value == name and id(node) not in stores:
                state["live"] = True

    stores: set[int] = set()

    class Stores(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, cst.Name):
                stores.add(id(node.target))

    walk(fn, Stores())
    walk(fn, Visitor())
    return state["live"]


def _aliases(value) -> bool:
    """A value that may share memory with another tensor: a name, an attribute, an item, a view method's result."""
    if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return value.func.attr.value in _VIEWS
    return False


def _reads(node, name: str, stores) -> bool:
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> bool:
            return not isinstance(target.target, cst.Name)

        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                found.append(n)

    walk(node, Visitor())
    return bool(found)


def _ends_in_return(statements) -> bool:
    """The block cannot fall through: its last statement is a return, or an if/else whose every branch ends in one
    (Informer's ``if self.output_attention: ... return (context_in, attns) else: return (context_in, None)``)."""
    last = statements[-1] if statements else None
    if isinstance(last, cst.If):
        branch = last
        while isinstance(branch, cst.If):
            if not _ends_in_return(list(branch.body.body)):
                return False
            branch = branch.orelse
        return isinstance(branch, cst.Else) and _ends_in_return(list(branch.body.body))
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
        self.cell = False  # the forward/construct of a layer class of the file: its callers are self.<attr>(...)
        self.unknown_uses = False  # a cell built where its calls cannot be followed (a container, a local)
        self.live = True  # some call may read a written argument after it

    @property
    def name(self) -> str:
        return self.fn.name.value


class _Imported:
    """A writing helper another file of the project defines (``from .util import mask_``), as the project's facts
    give it (:func:`exported_writers`, ``Options.argument_writers``): it gives its written parameters back there."""

    fn = None
    owner = None
    returns_value = False
    cell = False
    rebound: frozenset = frozenset()
    gives_back: frozenset = frozenset()

    def __init__(self, name, params, written) -> None:
        self.name = name  # the name this file calls it by
        self.params = list(params)
        self.written = set(written)


class _Plan:
    def __init__(self, module: cst.Module, returns, calls, remarks, exported: frozenset[str] = frozenset(),
                 imported: dict | None = None) -> None:
        self.module = module
        self.exported = exported  # module functions other files of the project import (a caller there may bind)
        self.imported = imported or {}  # name -> _Imported: writing helpers of other files this file calls
        self.returns = returns
        self.calls = calls
        self.remarks = remarks
        self.functions: dict[str, _Helper] = {}  # module functions by name
        self.methods: dict[tuple[str, str], _Helper] = {}  # (class, method) -> helper
        self.cells: dict[str, _Helper] = {}  # layer class -> the helper of its forward/construct
        self.layers: dict[tuple[str, str], _Helper] = {}  # (class, attribute) -> the cell self.<attribute> holds
        self.appends: set[int] = set()  # ids of layer forwards whose returns get the written inputs appended
        self.appending: set[int] = set()  # ids of statements binding a layer's output and its written inputs

    def make(self) -> None:
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef) and _plain(stmt):
                self.functions[stmt.name.value] = _Helper(stmt, _params(stmt, 0), None)
            elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                for s in stmt.body.body:
                    if isinstance(s, cst.FunctionDef) and _plain(s) and s.name.value not in _ENTRY_NAMES \
                            and s.params.params and s.params.params[0].name.value == "self":
                        self.methods[(stmt.name.value, s.name.value)] = _Helper(s, _params(s, 1), stmt.name.value)
        self._find_cells()
        defined: dict[str, int] = {}  # method name -> how many classes of the file define it
        for stmt in self.module.body:
            if isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                for name in {s.name.value for s in stmt.body.body if isinstance(s, cst.FunctionDef)}:
                    defined[name] = defined.get(name, 0) + 1
        for helper in self.methods.values():
            helper.overridden = defined.get(helper.fn.name.value, 0) > 1  # an override would return no tensor
        helpers = [*self.functions.values(), *self.methods.values(), *self.cells.values()]
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
        # a function other files import is reached from theirs: it gives its written parameters back, as their calls
        # bind them (project.argument_writers gives those files this plan's answer)
        reached |= {id(h.fn) for name, h in self.functions.items() if name in self.exported}
        helpers = [h for h in helpers if id(h.fn) in reached]  # what only __init__ or Python code calls runs as Python
        sites: dict[int, list] = {}  # id of a helper -> [(caller, its owner, statement or None, call)]
        for fn, owner in self._all_functions():
            if id(fn) not in reached:
                continue
            for stmt, call, callee in self._calls_in(fn, owner, statements_only=False):
                sites.setdefault(id(callee), []).append((fn, owner, stmt, call))
        for helper in helpers:
            helper.live = any(self._live_at(fn, call, helper) for fn, _, _, call in sites.get(id(helper), ()))
            if not sites.get(id(helper)) and not helper.cell:
                # called by no code of the file: a model method nothing here calls is said, a plain class's is
                # Python code (an inference helper, a filter object's method)
                helper.live = helper.owner is not None and helper.owner in self.layer_classes
        good = {id(h) for h in helpers if h.written and not h.returns_value and not (h.written & h.rebound)
                and not h.writes_self and not h.overridden and not h.cell}
        handing = {id(h) for h in helpers if h.written and h.returns_value and h.written <= h.gives_back
                   and not (h.written & h.rebound) and not h.cell}  # the caller can bind what it gets back
        cell_good = {id(h) for h in helpers if h.cell and h.written and h.live and self._cell_rewritable(h, sites)}
        for helper in helpers:
            if not helper.written or id(helper) in handing or id(helper) in cell_good:
                continue
            if id(helper) in good:
                self.returns[id(helper.fn)] = [p for p in helper.params if p in helper.written]
                continue
            if not helper.live and not helper.unknown_uses:
                continue  # no call reads the written argument again: torch's write changes nothing that is read
            name = helper.fn.name.value
            param = sorted(helper.written)[0]
            if helper.cell:
                why = "is built where its calls cannot be followed" if helper.unknown_uses \
                    else "writes self as well" if helper.writes_self \
                    else f"binds {param} to another value as well" if helper.written & helper.rebound \
                    else "returns None on one path and a value on another" if helper.returns_value \
                    else "is called where the input cannot be bound again"
                self.remarks.setdefault(id(helper.first[param]), (
                    f"{helper.owner} writes into its input {param} and {why}: a static graph (GRAPH_MODE) does not "
                    f"carry the write back to the layer that calls it"))
                continue
            why = "returns a value" if helper.returns_value else "writes self as well" if helper.writes_self \
                else "another class of the file defines it too" if helper.overridden \
                else f"binds {param} to another value as well"
            self.remarks.setdefault(id(helper.first[param]), (
                f"{name} writes into its argument {param} and {why}: a static graph (GRAPH_MODE) does not carry the "
                f"write back to the caller"))
        for helper in helpers:
            if id(helper) in cell_good:
                names = [p for p in helper.params if p in helper.written]
                if helper.returns_value and len(names) == 1 and _returns_only(helper.fn, names[0]) \
                        and all(isinstance(self._line_of(fn, call).body[0], cst.Expr)
                                for fn, _, _, call in sites.get(id(helper), ())):
                    helper.gives_input = True  # return t already: each call (a statement) binds it, t = layer(t)
                    continue
                self.returns[id(helper.fn)] = names
                if helper.returns_value:
                    self.appends.add(id(helper.fn))
        # another file's writing helpers give back what they write there (project.argument_writers): their calls
        # here are bound again like those of the file's own
        good |= {id(h) for h in self.imported.values()}
        # the call sites: every call of a good helper in the file, or of another file's
        for helper in [*helpers, *self.imported.values()]:
            for fn, owner, stmt, call in sites.get(id(helper), ()):
                callee = helper
                live = self._live_at(fn, call, callee)
                if id(callee) in cell_good:
                    line = self._line_of(fn, call)
                    self.calls[id(line)] = self._bound_args(call, callee)
                    if callee.returns_value and not getattr(callee, "gives_input", False):
                        self.appending.add(id(line))
                    continue
                if id(callee) in handing:
                    line = self._line_of(fn, call)
                    names = self._bound_args(call, callee)
                    bound = set()
                    if line is not None and len(line.body) == 1 and isinstance(line.body[0], cst.Assign) \
                            and line.body[0].value is call:
                        for target in line.body[0].targets:
                            bound.update(target_names(target.target))
                    if live and line is not None and (names is None or not set(names) <= bound):
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
                elif live:
                    anchor = stmt if stmt is not None else self._line_of(fn, call)
                    if anchor is not None:
                        self.remarks.setdefault(id(anchor), (
                            f"{callee.name} writes into the argument it is handed here, which cannot be bound "
                            f"again: a static graph (GRAPH_MODE) does not carry the write back"))

    def _find_cells(self) -> None:
        """The layer classes of the file (a class defining ``forward`` or ``construct``, or deriving from one of the
        file's), and which attribute of which class holds one (``self.clear = Clear()``). A layer class named anywhere
        else (``nn.ModuleList([Clear()])``, ``c = Clear()``, ``self.clear`` handed on as a value) has calls that
        cannot be followed."""
        classes = {s.name.value: s for s in self.module.body
                   if isinstance(s, cst.ClassDef) and isinstance(s.body, cst.IndentedBlock)}
        own: dict[str, cst.FunctionDef] = {}
        for name, cls in classes.items():
            for s in cls.body.body:
                if isinstance(s, cst.FunctionDef) and s.name.value in ("forward", "construct"):
                    own[name] = s
        def entry(name, seen=()):
            if name in own:
                return name
            cls = classes.get(name)
            if cls is None or name in seen:
                return None
            for base in cls.bases:
                if isinstance(base.value, cst.Name):
                    found = entry(base.value.value, (*seen, name))
                    if found:
                        return found
            return None
        by_class: dict[str, _Helper] = {}
        self.layer_classes = set()
        for name in classes:
            found = entry(name)
            if found is None:
                continue
            self.layer_classes.add(name)
            if found not in by_class:
                fn = own[found]
                helper = _Helper(fn, _params(fn, 1), found)
                helper.cell = True
                helper.overridden = False
                by_class[found] = helper
                if _plain(fn) and fn.params.params and fn.params.params[0].name.value == "self":
                    self.cells[found] = helper
            by_class[name] = by_class[found]
        # a class deriving from a layer class with a forward of its own calls its own (entry finds it first), and may
        # call the base's as super().forward(x): the base's calls cannot all be followed
        for name, cls in classes.items():
            if name not in own:
                continue
            for base in cls.bases:
                if isinstance(base.value, cst.Name) and base.value.value in by_class:
                    by_class[base.value.value].unknown_uses = True
        plan = self
        attrs: dict[tuple[str, str], str] = {}
        known_names: set[int] = set()

        class Builds(cst.CSTVisitor):
            def __init__(self, owner):
                self.owner = owner

            def visit_Assign(self, node: cst.Assign) -> None:
                value = node.value
                if self.owner is not None and len(node.targets) == 1 and isinstance(value, cst.Call) \
                        and isinstance(value.func, cst.Name) and value.func.value in by_class:
                    target = node.targets[0].target
                    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                            and target.value.value == "self":
                        attrs[(self.owner, target.attr.value)] = value.func.value
                        known_names.add(id(value.func))

        for fn, owner in self._all_functions():
            walk(fn, Builds(owner))
        named: list = []

        class Names(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                if node.value in by_class and id(node) not in known_names:
                    named.append(node.value)

            def visit_ClassDef(self, node: cst.ClassDef) -> bool:
                for s in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
                    walk(s, self)
                return False

        walk(self.module, Names())
        for name in named:
            by_class[name].unknown_uses = True
        for (owner, attr), name in attrs.items():
            helper = by_class[name]
            if helper.fn.name.value not in ("forward", "construct") or helper.owner not in self.cells:
                continue
            self.layers[(owner, attr)] = helper

        # self.<attr> used other than as the called function: its calls cannot be followed
        class Uses(cst.CSTVisitor):
            def __init__(self, owner):
                self.owner = owner

            def visit_Call(self, node: cst.Call) -> None:
                if isinstance(node.func, cst.Attribute):
                    known_names.add(id(node.func))

            def visit_Attribute(self, node: cst.Attribute) -> None:
                if isinstance(node.value, cst.Name) and node.value.value == "self" \
                        and (self.owner, node.attr.value) in plan.layers and id(node) not in known_names:
                    named.append(node)

        for fn, owner in self._all_functions():
            if fn.name.value == "__init__":
                continue
            named.clear()
            walk(fn, Uses(owner))
            for node in named:
                plan.layers[(owner, node.attr.value)].unknown_uses = True

    def _cell_rewritable(self, helper: _Helper, sites) -> bool:
        """A layer's forward can return its written inputs when every call of it is known, binds plain names and is a
        statement or one assignment of the call, and the forward returns a value on every path or on none."""
        if helper.unknown_uses or helper.writes_self or helper.written & helper.rebound:
            return False
        if helper.returns_value and not _always_returns(helper.fn):
            return False
        for fn, _, _, call in sites.get(id(helper), ()):
            line = self._line_of(fn, call)
            if line is None or len(line.body) != 1 or self._bound_args(call, helper) is None:
                return False
            small = line.body[0]
            if isinstance(small, cst.Expr) and small.value is call:
                continue
            if helper.returns_value and isinstance(small, cst.Assign) and small.value is call \
                    and len(small.targets) == 1:
                continue
            return False
        return True

    def _live_at(self, fn: cst.FunctionDef, call: cst.Call, callee: _Helper) -> bool:
        """Whether the caller may read a tensor the call writes after it: a written argument that is no plain name, a
        name read after the call's line (or anywhere in a loop around it), a parameter of the caller (its own caller
        may read it), or a name bound as a view or another name of a tensor (``h = x[:, :2]``, ``a, b = x.chunk(2)``)."""
        names = self._bound_args(call, callee)
        if names is None:
            return True
        line = self._line_of(fn, call)
        bound: set[str] = set()  # names the call's own assignment binds again to the value the helper gives back
        if line is not None and len(line.body) == 1 and isinstance(line.body[0], cst.Assign) \
                and line.body[0].value is call and not callee.cell:
            for target in line.body[0].targets:
                bound.update(target_names(target.target))
        written = [p for p in callee.params if p in callee.written]
        return any(_read_after(fn, line, name) for param, name in zip(written, names)
                   if not (param in callee.gives_back and name in bound))

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
            return self.functions.get(func.value) or self.imported.get(func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                and owner is not None:
            return self.methods.get((owner, func.attr.value)) or self.layers.get((owner, func.attr.value))
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


def exported_writers(module: cst.Module, names: frozenset[str]) -> dict[str, tuple[list[str], list[str]]]:
    """{name: (its positional parameters, those it writes)} of the module functions among ``names`` (the ones other
    files of the project import) that write into an argument and give it back once converted: this rule's own plan,
    run on their file (``project.argument_writers`` reads every such file; the plan that converts it adds the
    ``return``)."""
    returns: dict = {}
    _Plan(module, returns, {}, {}, exported=names).make()
    out = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in names and id(stmt) in returns:
            out[stmt.name.value] = (_params(stmt, 0), list(returns[id(stmt)]))
    return out


def _imported_writers(module: cst.Module, writers: tuple, local: frozenset[str]) -> dict[str, _Imported]:
    """The project's writing helpers (``Options.argument_writers``) this file binds by a top-level import from one
    of the project's modules (``from .util import mask_``, ``from former.util import mask_``), by their local name."""
    if not writers:
        return {}
    known = {name: (params, written) for name, params, written in writers}
    found = {}
    for stmt in module.body:
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.ImportFrom)):
            continue
        imp = stmt.body[0]
        if isinstance(imp.names, cst.ImportStar):
            continue
        head = (dotted_name(imp.module) or "").split(".")[0] if imp.module is not None else ""
        if not imp.relative and head not in local:
            continue
        for alias in imp.names:
            if not isinstance(alias.name, cst.Name) or alias.name.value not in known:
                continue
            bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
                else alias.name.value
            found[bound] = _Imported(bound, *known[alias.name.value])
    return found


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
                if name in params and method.endswith("_") and not method.startswith("_") \
                        and not (receiver is not None and isinstance(receiver, cst.Name)
                                 and argument_never_reaches(fn, call, name)):
                    found.append((self.line, name))  # glow's thops.sum: rebound before every update of it

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
