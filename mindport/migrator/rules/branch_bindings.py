"""The converter rule BranchBindingTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/branch_bindings.md shows both."""
from __future__ import annotations

import collections

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import own_bindings, target_names
from mindport.migrator.walk import parse_statement, syntax_children

_ALL = frozenset({"*"})  # "binds every name": a branch that ends in return/raise/break/continue never falls through
_EXITS = (cst.Return, cst.Raise, cst.Break, cst.Continue)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class BranchBindingTransform(Rule):
    """A name a method of a model class binds on some branches of an ``if`` only, or in a loop's body, and reads
    later, is bound to ``None`` before the statement that holds the ``if`` or the loop. A module function such a
    method names (calls, or picks to call: ``fn = f if c else g``), directly or through other such functions, is
    compiled with it and is taken the same way.

    Python looks a local name up when the line runs, so ``if use_cache: start = pos`` followed later by
    ``if use_cache: q = start`` is fine in torch and in PyNative. MindSpore's static graph (GRAPH_MODE, ``@jit``)
    compiles both branches and refuses it: ``UnboundLocalError: The local variable 'start' is not defined in false
    branch, but defined in true branch``, and for a loop ``The local variable 'out' defined in the 'for' loop body
    cannot be used outside of the loop body``. Binding the name first changes nothing when the method runs (the branch
    that reads it still sees the value its branch bound) and lets the graph compile. The binding goes before the
    outermost statement of the method that holds the ``if``, so a value kept from one loop iteration to the next
    stays kept. A name a loop body reads before it binds it (kept from the iteration before, read under ``if step !=
    0``: batch 7 CurveNet, "The name 'cur_feature' is not defined") is bound first too. Only methods of model classes (the code a graph compiles) are touched; names bound before, parameters
    and ``global``/``nonlocal`` names are left alone.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Attention(nn.Module):
                    def forward(self, x, use_cache=False):
                        if use_cache:
                            start = x.shape[1]
                        y = x * 2
                        if use_cache:
                            y = y[:, start:]
                        return y
            """,
            after="""
                from mindspore import nn


                class Attention(nn.Cell):
                    def construct(self, x, use_cache=False):
                        start = None
                        if use_cache:
                            start = x.shape[1]
                        y = x * 2
                        if use_cache:
                            y = y[:, start:]
                        return y
            """,
            note="start is bound on one branch only: bound to None first, so GRAPH_MODE compiles the method.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Stack(nn.Module):
                    def forward(self, h, layers, first):
                        for i, layer in enumerate(layers):
                            if i == first:
                                e = layer(h)
                            if i > first:
                                h = h + e
                        return h
            """,
            after="""
                from mindspore import nn


                class Stack(nn.Cell):
                    def construct(self, h, layers, first):
                        e = None
                        for i, layer in enumerate(layers):
                            if i == first:
                                e = layer(h)
                            if i > first:
                                h = h + e
                        return h
            """,
            note="The binding goes before the loop, not inside it: e keeps its value from one iteration to the next.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Dense(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(8, 4)])

                    def forward(self, x):
                        inputs = x
                        for block in self.blocks:
                            out = block(inputs)
                            inputs = torch.cat([inputs, out], 1)
                        return out + x
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                class Dense(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.blocks = nn.CellList([nn.Dense(in_channels=4, out_channels=4), nn.Dense(in_channels=8, out_channels=4)])

                    def construct(self, x):
                        inputs = x
                        out = None
                        for block in self.blocks:
                            out = block(inputs)
                            inputs = ops.cat(mp_tensor.promoted([inputs, out]), axis=1)
                        return out + x
            """,
            note="A name the loop's body binds and the method reads after the loop.",
        ),
        Example(
            before="""
                from mindspore import nn


                class Gate(nn.Cell):
                    def construct(self, x):
                        if x.shape[0] > 1:
                            y = x
                        else:
                            y = -x
                        if self.training:
                            return y
                        z = y * 2
                        return z


                def helper(flag):
                    if flag:
                        value = 1
                    return value
            """,
            note="Bound on every branch, or outside a model class (a function no model method calls): left as written.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._method_params: dict[int, set[str]] = {}  # id of a model-class method's body -> its parameters

    def visit_Module(self, node: cst.Module) -> None:
        """A module function a model class's method names (calls, or picks: ``attn_fn = attention if not
        memory_efficient else memory_efficient_attention``), or such a function names, and so on, runs in the graph
        as the method does (``memory_efficient_attention``'s ``attn_bias_chunks``, bound under ``if
        exists(attn_bias):`` only): its blocks are taken as the methods'."""
        functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        todo = [m for c in node.body if isinstance(c, cst.ClassDef) and c.name.value in self._module_classes
                and isinstance(c.body, cst.IndentedBlock) for m in c.body.body if isinstance(m, cst.FunctionDef)]
        seen: set[str] = set()
        while todo:
            for name in _names(todo.pop()):  # called, or picked by name: attn_fn = f if c else g; attn_fn(...)
                if name in functions and name not in seen:
                    seen.add(name)
                    todo.append(functions[name])
        for name in seen:
            fn = functions[name]
            if isinstance(fn.body, cst.IndentedBlock):
                self._method_params[id(fn.body)] = {p.name.value for p in _params(fn)}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # (bookkeeping in visit hooks only: a leave hook does not run when an earlier rule changed the node)
        if node.name.value in self._module_classes and isinstance(node.body, cst.IndentedBlock):
            for stmt in node.body.body:
                if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
                    self._method_params[id(stmt.body)] = {p.name.value for p in _params(stmt)}

    def leave_IndentedBlock(self, original_node, updated_node):
        params = self._method_params.get(id(original_node))
        if params is None:
            return updated_node
        body = list(updated_node.body)
        reads = _reads(body)
        bound = set(params) | _declared(body)
        out: list = []
        for stmt in body:
            names: list[str] = []
            for node in _branches(stmt):
                maybe = _bound_any(node) - _bound_all([node])  # a loop's body may not run: all of it is "maybe"
                if isinstance(node, cst.For):
                    maybe -= _target_names(node.target)  # the loop variables: read inside the loop, where bound
                maybe = {n for n in maybe if n not in bound and n not in names}
                if maybe:
                    inside = _reads([node])  # read only where it is bound (a loop's temporaries): nothing to do
                    carried = _carried(node.body.body) if isinstance(node, (cst.For, cst.While)) else set()
                    names.extend(n for n in sorted(maybe) if reads[n] > inside[n] or n in carried)
            for name in names:
                out.append(parse_statement(f"{name} = None"))
                bound.add(name)
            if names and stmt.leading_lines:  # the statement's comments and blank lines stay above the bindings
                out[-len(names)] = out[-len(names)].with_changes(leading_lines=stmt.leading_lines)
                stmt = stmt.with_changes(leading_lines=[])
            out.append(stmt)
            bound |= _bound_any(stmt)
        if len(out) == len(body):
            return updated_node
        self.ctx.converted_sites += 1
        return updated_node.with_changes(body=out)


def _names(node: cst.CSTNode) -> list:
    """Every plain name the node reads or binds (not an attribute's or a keyword's), nested functions included."""
    found: list = []

    class Visitor(cst.CSTVisitor):
        def visit_Attribute(self, attr: cst.Attribute) -> bool:
            attr.value.visit(self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)
            return False

        def visit_Name(self, name: cst.Name) -> None:
            found.append(name.value)

    node.visit(Visitor())
    return found


def _params(node: cst.FunctionDef):
    p = node.params
    yield from (*p.posonly_params, *p.params, *p.kwonly_params)
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            yield star


def _children(node: cst.CSTNode):
    """The child nodes, not entering nested scopes (their names are their own)."""
    for child in syntax_children(node):
        if not isinstance(child, _SCOPES):
            yield child


def _branches(node: cst.CSTNode):
    """The ``if`` statements and loops in ``node`` (itself included), not in nested scopes."""
    if isinstance(node, (cst.If, cst.For, cst.While)):
        yield node
    for child in _children(node):
        yield from _branches(child)


def _target_names(target: cst.BaseExpression) -> set[str]:
    return set(target_names(target))


def _bound_any(node: cst.CSTNode) -> set[str]:
    names = set(own_bindings(node))
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return names
    for child in _children(node):
        names |= _bound_any(child)
    return names


def _bound_all(stmts) -> frozenset[str]:
    """The names certainly bound once ``stmts`` fall through (``_ALL`` when they never do)."""
    names: set[str] = set()
    for stmt in stmts:
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else \
            [stmt] if isinstance(stmt, cst.BaseSmallStatement) else None
        if smalls is not None:
            for small in smalls:
                if isinstance(small, _EXITS):
                    return _ALL
                names |= own_bindings(small)
        elif isinstance(stmt, cst.If):
            then = _bound_all(stmt.body.body)
            other = _bound_all([stmt.orelse] if isinstance(stmt.orelse, cst.If)
                               else stmt.orelse.body.body if stmt.orelse is not None else [])
            both = then if other is _ALL else other if then is _ALL else then & other
            if both is _ALL:
                return _ALL
            names |= both
        elif isinstance(stmt, cst.With):
            inner = _bound_all(stmt.body.body)
            if inner is _ALL:
                return _ALL
            names |= inner | set().union(*(_bound_any(item) for item in stmt.items))
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
    return frozenset(names)


def _carried(body) -> set[str]:
    """Names a loop body reads before it binds them (on the path to the read): kept from the iteration before
    (CurveNet's walk: ``if step != 0: ... cur_feature ...`` above ``cur_feature = ...``)."""
    stored: set[str] = set()
    carried: set[str] = set()

    def visit(node):
        nonlocal stored
        if isinstance(node, _SCOPES):
            return
        if isinstance(node, (cst.Assign, cst.AnnAssign)):
            if node.value is not None:
                visit(node.value)
            for target in [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]:
                _visit_target(target)
            return
        if isinstance(node, cst.AugAssign):
            visit(node.value)
            visit(node.target)
            return
        if isinstance(node, cst.For):
            visit(node.iter)
            _visit_target(node.target)
            for stmt in node.body.body:
                visit(stmt)
            return
        if isinstance(node, cst.If):
            visit(node.test)
            before = set(stored)
            for stmt in node.body.body:
                visit(stmt)
            then, stored = stored, set(before)
            if node.orelse is not None:
                visit(node.orelse)
            stored = before | (then & stored)
            return
        if isinstance(node, cst.Name) and node.value not in stored:
            carried.add(node.value)
        for child in syntax_children(node):
            visit(child)

    def _visit_target(target):
        if isinstance(target, cst.Name):
            stored.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                _visit_target(element.value)
        else:
            visit(target)  # an attribute or item: its receiver is read

    for stmt in body:
        visit(stmt)
    return carried


def _declared(body) -> set[str]:
    names: set[str] = set()

    def visit(node):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            names.update(n.name.value for n in node.names)
        for child in _children(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return names


def _reads(body) -> collections.Counter:
    """How often each name is read in ``body`` (nested scopes included: a closure reads the method's names)."""
    names: collections.Counter = collections.Counter()
    stores: set[int] = set()

    def visit(node):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            for target in ([t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]):
                if isinstance(target, cst.Name) and not isinstance(node, cst.AugAssign):
                    stores.add(id(target))
        if isinstance(node, cst.Attribute):
            stores.add(id(node.attr))
        if isinstance(node, cst.Name) and id(node) not in stores:
            names[node.value] += 1
        for child in syntax_children(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return names
