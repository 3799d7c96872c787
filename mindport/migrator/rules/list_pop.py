"""The converter rule ListPopTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/list_pop.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule, forward_methods
from mindport.migrator.walk import parse_expression, parse_statement, replace_nodes, walk

_TEMP = "_mp_popped"
_NESTED = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp, cst.BooleanOperation)


class OwnListRule(Rule):
    """A rule on the lists a model's methods build themselves (``self._lists[-1]``: those of the enclosing method, None
    outside one); the rules that re-bind such a list instead of changing it in place build on it."""

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._methods: set[int] = set()  # ids of model-class methods (not __init__)
        self._lists: list[frozenset[str] | None] = []  # per enclosing function: the lists it builds (None: not a method)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._methods |= forward_methods(node, self._module_classes)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._lists.append(_own_lists(node) if id(node) in self._methods else None)

    def leave_FunctionDef(self, original_node, updated_node):
        self._lists.pop()
        return updated_node


class ListPopTransform(OwnListRule):
    """In a model's methods, ``xs.pop()`` on a list the method builds (``xs = []``) becomes a read of the end and a
    shorter list: ``y = xs.pop()`` is ``y = xs[-1]`` then ``xs = xs[:-1]`` (``pop(0)``: ``xs[0]``, ``xs[1:]``).

    U-Nets keep their skip connections in a list and take them back with ``pop()``. MindSpore's static graph
    (GRAPH_MODE, ``@jit``) gives ``pop()`` used inside an expression as a (list, item) pair (``ops.cat([x,
    skips.pop()])``: "Failed calling Concat with tensors=List[Tensor, Tuple[List[...], Tensor]]"), and even as a
    statement, popping in a loop over sub-Cells gives other numbers than PyNative, silently (max rel 0.2 on labml's
    stable-diffusion U-Net). Reading and re-binding compiles and gives torch's numbers in both modes. A pop inside an
    expression is read into ``_mp_popped`` on the line before. Only lists the method itself builds, never stored
    elsewhere (``self.cache = xs`` would see the rebinding), with ``pop()``, ``pop(-1)`` or ``pop(0)``. A conditional
    expression assigned whole whose first branch is the pop (``first = skips.pop(0) if skips else None``: a graph
    gave it as the (list, item) pair too, x-transformers' ``layer_mem = mems.pop(0) if mems else None``) becomes an
    ``if`` statement; a pop elsewhere in a lambda, a comprehension or a conditional expression is left as written.

    A list the method is handed (a decoder's ``forward(self, x, skips)`` popping the encoder's skips) is popped the
    same way, in the method's own copy: the caller's list keeps its items. In torch the caller's list is emptied; no
    MindSpore form keeps that in a static graph, which hands lists to a Cell by value (measured: the caller's
    ``len(skips)`` after the call is the whole list even with ``pop()`` kept), and ``pop()`` kept as a statement in a
    loop over sub-Cells fails there ("IndexError: index 1 is out of bounds", mini-stable-diffusion's U-Net decoder).
    Only a caller that reads the list after handing it on would see the difference.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class UNet(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.down = nn.ModuleList([nn.Identity(), nn.Identity()])
                        self.up = nn.ModuleList([nn.Identity(), nn.Identity()])

                    def forward(self, x):
                        skips = []
                        for block in self.down:
                            x = block(x)
                            skips.append(x)
                        for block in self.up:
                            x = block(torch.cat([x, skips.pop()], dim=1))
                        first = skips.pop(0) if skips else None
                        return x
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                class UNet(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.down = nn.CellList([nn.Identity(), nn.Identity()])
                        self.up = nn.CellList([nn.Identity(), nn.Identity()])

                    def construct(self, x):
                        skips = []
                        for block in self.down:
                            x = block(x)
                            skips.append(x)
                        for block in self.up:
                            _mp_popped = skips[-1]
                            skips = skips[:-1]
                            x = block(ops.cat(mp_tensor.promoted([x, _mp_popped]), axis=1))
                        if skips:
                            first = skips[0]
                            skips = skips[1:]
                        else:
                            first = None
                        return x
            """,
            note="The skip connection is read, then the list shortened; a pop as a conditional value is a statement.",
        ),
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self._lists[-1] is not None:
            self._lists[-1] = self._lists[-1] | _popped_parameters(node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        lists = self._lists[-1] if self._lists else None
        if not lists or len(updated_node.body) != 1:
            return updated_node
        stmt = updated_node.body[0]
        branch = _conditional_pop(stmt, lists)
        if branch is not None:
            self.ctx.converted_sites += 1
            return branch.with_changes(leading_lines=updated_node.leading_lines)
        pops = _pops(stmt, lists)
        if len(pops) != 1:
            return updated_node
        call, name, first = pops[0]
        if _count_name(stmt, name) != 1:
            return updated_node  # the list is read elsewhere on the line: the order of reads would change
        read = parse_expression(f"{name}[{'0' if first else '-1'}]")
        shorter = parse_statement(f"{name} = {name}[{'1:' if first else ':-1'}]")
        if isinstance(stmt, cst.Expr) and stmt.value is call:
            lines = [shorter]
        elif isinstance(stmt, cst.Assign) and stmt.value is call:
            lines = [updated_node.with_changes(body=[stmt.with_changes(value=read)]), shorter]
        else:
            line = updated_node.with_changes(body=[replace_nodes(stmt, {id(call): cst.Name(_TEMP)})])
            lines = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(_TEMP))], read)]), shorter, line]
        lines = [ln.with_changes(leading_lines=updated_node.leading_lines if i == 0 else []) for i, ln in
                 enumerate(lines)]
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(lines)


def _own_lists(node: cst.FunctionDef) -> frozenset[str]:
    """Names the function binds to a new list (``xs = []``, ``[...]``, a list comprehension) and never hands over
    whole (``self.cache = xs``, ``ys = xs``): rebinding them is the same as shortening them in place."""
    built, aliased = set(), set()

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            if isinstance(assign.value, cst.Name):
                aliased.add(assign.value.value)
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                    and isinstance(assign.value, (cst.List, cst.ListComp)):
                built.add(assign.targets[0].target.value)

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node  # a nested function's lists are its own

    walk(node, Visitor())
    return frozenset(built - aliased)


def _popped_parameters(node: cst.FunctionDef) -> frozenset[str]:
    """The method's parameters it pops from (a decoder handed the encoder's skip list) and never hands over whole
    (``ys = xs``, ``self.cache = xs``): popped from by re-binding, like the method's own lists."""
    params = {p.name.value for p in [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]}
    params -= {"self", "cls"}
    popped, aliased = set(), set()

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            name = _pop_of(call, frozenset(params))
            if name and _index(call.args) is not None:
                popped.add(name)

        def visit_Assign(self, assign: cst.Assign) -> None:
            if isinstance(assign.value, cst.Name):
                aliased.add(assign.value.value)

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node

    walk(node, Visitor())
    return frozenset(popped - aliased)


def _conditional_pop(stmt: cst.CSTNode, lists: frozenset[str]) -> "cst.If | None":
    """``y = xs.pop(0) if test else other`` (x-transformers' ``layer_mem = mems.pop(0) if mems else None``) as the
    statement ``if test: y = xs[0]; xs = xs[1:] / else: y = other``: a graph gave the conditional expression's pop as
    the (list, item) pair ("Failed calling Shape with input_x=Tuple[List[None],None]" once the pair reached a layer),
    the statement form compiles. Only a pop as the whole first branch, on one name target that is not the list; the
    test and the other branch are kept as written (evaluated once, before the pop, as in Python)."""
    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name)
            and isinstance(stmt.value, cst.IfExp)):
        return None
    pop = stmt.value.body
    name = _pop_of(pop, lists)
    index = _index(pop.args) if name else None
    target = stmt.targets[0].target.value
    if index is None or target == name or _has_pop(stmt.value.test, lists) or _has_pop(stmt.value.orelse, lists):
        return None
    first = index == 0
    body = [parse_statement(f"{target} = {name}[{'0' if first else '-1'}]"),
            parse_statement(f"{name} = {name}[{'1:' if first else ':-1'}]")]
    other = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], stmt.value.orelse)])
    return cst.If(test=stmt.value.test, body=cst.IndentedBlock(body), orelse=cst.Else(cst.IndentedBlock([other])))


def _pops(stmt: cst.CSTNode, lists: frozenset[str]) -> list:
    """The ``xs.pop()`` / ``pop(-1)`` / ``pop(0)`` calls on the statement's own level, as (call, list name, from the
    front); none when a pop sits in a lambda, comprehension or conditional expression (the line is left)."""
    found: list = []
    nested: list = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, _NESTED):
                nested.append(node)
                return False
            name = _pop_of(node, lists)
            index = _index(node.args) if name else None
            if index is not None:
                found.append((node, name, index == 0))
            return True

    walk(stmt, Visitor())
    return [] if any(_has_pop(node, lists) for node in nested) else found


def _pop_of(node: cst.CSTNode, lists: frozenset[str]) -> str | None:
    """The list name of ``xs.pop(...)`` on one of ``lists``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "pop" \
            and isinstance(node.func.value, cst.Name) and node.func.value.value in lists:
        return node.func.value.value
    return None


def _has_pop(node: cst.CSTNode, lists: frozenset[str]) -> bool:
    hits = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if _pop_of(call, lists):
                hits.append(call)

    walk(node, Visitor())
    return bool(hits)


def _index(args) -> int | None:
    if not args:
        return -1
    if len(args) != 1 or args[0].keyword is not None or args[0].star:
        return None
    value = args[0].value
    if isinstance(value, cst.Integer) and value.value == "0":
        return 0
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) \
            and isinstance(value.expression, cst.Integer) and value.expression.value == "1":
        return -1
    return None


def _count_name(stmt: cst.CSTNode, name: str) -> int:
    count = []

    class Visitor(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                count.append(node)

    walk(stmt, Visitor())
    return len(count)

