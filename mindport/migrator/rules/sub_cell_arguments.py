"""The converter rule SubCellArgumentTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/sub_cell_arguments.md shows both."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import (NO_SPACE_EQUAL, bindings_in_scope, code_of, is_docstring, last_name,
                                      module_level, target_names, with_none_keywords)
from mindport.migrator.walk import parse_statement, walk

MP107 = "MP107"
_ENTRIES = ("forward", "construct")
_RECOMPUTE = ("checkpoint", "recompute")  # torch.utils.checkpoint.checkpoint(blk, x) and what the table makes of it


class SubCellArgumentTransform(GraphMethodRule):
    """An attribute a model's method writes on a layer it then calls (``blk.H, blk.W = H, W`` before ``x = blk(x)``:
    Swin-style backbones, FocalNet's BasicLayer) is handed to the layer's ``construct`` as a keyword argument too:
    the call becomes ``blk(x, _mp_H=H, _mp_W=W)``, and the layer's ``construct`` takes ``_mp_H=None, _mp_W=None`` and
    reads them where it read ``self.H``/``self.W`` (``self.H`` when called without them). The write itself becomes
    ``mp_framework.keep_cache(blk, "H", H)``: PyNative writes the attribute as torch does, for any other reader.

    A static graph (GRAPH_MODE) takes a sub-Cell's attributes as constants of its compilation: the write is not
    handed to the sub-Cell's ``construct``, which reads what ``__init__`` set (measured on MindSpore 2.10: ``None``,
    "view(): argument 'shape' must be tuple of int, not None"; FocalNet's own model failed to compile). The write is
    kept in PyNative, so any other reader of the attribute is unchanged; in PyNative the argument holds the very
    value written. A graph does not run the write: MindSpore 2.10 fails to compile an attribute write on a sub-Cell
    given a construct argument ("Cast ... does not support this kernel data type: Int64 -> Problem", measured).

    Threaded only when the converter knows every class the layer can be: the layer is ``self.<name>`` or a loop
    variable over ``self.<name>`` (``for blk in self.blocks``, ``enumerate(self.blocks)``), ``__init__`` builds that
    attribute from classes of this file only (``nn.ModuleList([Block(...) for ...])``, ``self.blocks.append(...)``),
    and each of those classes reads every written attribute in its ``construct`` alone (no other method but
    ``__init__`` reads or writes it) and takes no ``*args``/``**kwargs``. The values written must be a tuple of as
    many values as attributes (or one value), and what they read is not rebound between the write and the call; the
    calls threaded are those that follow the write in its block: ``blk(...)`` and ``checkpoint(blk, ...)``
    (``mindspore.recompute`` hands keywords on to the block). Otherwise the write keeps its torch meaning and is said
    MP107 (a warning: GRAPH_MODE reads another value there; PyNative runs it as torch does).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Block(nn.Module):
                    def __init__(self, dim):
                        super().__init__()
                        self.fc = nn.Linear(dim, dim)
                        self.H = None
                        self.W = None

                    def forward(self, x):
                        B, L, C = x.shape
                        y = self.fc(x).view(B, self.H, self.W, C).transpose(1, 2)
                        return x + y.reshape(B, L, C)


                class Stage(nn.Module):
                    def __init__(self, dim, depth):
                        super().__init__()
                        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])

                    def forward(self, x, H, W):
                        for blk in self.blocks:
                            blk.H, blk.W = H, W
                            x = blk(x)
                        return x
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import framework as mp_framework


                class Block(nn.Cell):
                    def __init__(self, dim):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=dim, out_channels=dim)
                        self.H = None
                        self.W = None

                    def construct(self, x, _mp_H=None, _mp_W=None):
                        if _mp_H is None:
                            _mp_H = self.H
                        if _mp_W is None:
                            _mp_W = self.W
                        B, L, C = x.shape
                        y = self.fc(x).view(B, _mp_H, _mp_W, C).swapaxes(axis0=1, axis1=2)
                        return x + y.reshape(B, L, C)


                class Stage(nn.Cell):
                    def __init__(self, dim, depth):
                        super().__init__()
                        self.blocks = nn.CellList([Block(dim) for _ in range(depth)])

                    def construct(self, x, H, W):
                        for blk in self.blocks:
                            mp_framework.keep_cache(blk, "H", H)
                            mp_framework.keep_cache(blk, "W", W)
                            x = blk(x, _mp_H=H, _mp_W=W)
                        return x
            """,
            note="The write stays in PyNative; the values reach the block's construct as arguments.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._plan = _Plan()
        self._entry: list[tuple[str, ...]] = []  # per enclosing function: the attributes its reads take from arguments

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._plan = _plan(node, self._module_classes)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        attrs = self._plan.entries.get(id(node))
        self._entry.append(attrs if attrs is not None else (self._entry[-1] if self._entry else ()))

    def leave_FunctionDef(self, original_node, updated_node):
        self._entry.pop()
        attrs = self._plan.entries.get(id(original_node))
        if attrs:
            self.ctx.converted_sites += 1
            params = with_none_keywords(updated_node.params, [f"_mp_{a}" for a in attrs])
            body = list(updated_node.body.body)
            at = 1 if body and is_docstring(body[0]) else 0
            body[at:at] = [parse_statement(f"if _mp_{a} is None:\n    _mp_{a} = self.{a}\n") for a in attrs]
            updated_node = updated_node.with_changes(params=params, body=updated_node.body.with_changes(body=body))
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_Attribute(self, original_node, updated_node):
        if self._entry and self._entry[-1] and isinstance(original_node.value, cst.Name) \
                and original_node.value.value == "self" and original_node.attr.value in self._entry[-1]:
            return cst.Name(f"_mp_{original_node.attr.value}")
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        line = self._plan.lines.get(id(original_node))
        if line is not None:  # the layer's calls here, as other rules wrote them (checkpoint -> mindspore.recompute)
            self.ctx.converted_sites += 1
            return updated_node.visit(_PassArguments(*line))
        write = self._plan.writes.get(id(original_node.body[0])) if len(original_node.body) == 1 else None
        if write is None:
            return updated_node
        holder, pairs = write
        keep = self.ctx.target_text("mindport.runtime.framework.keep_cache")
        return cst.FlattenSentinel([
            updated_node.with_changes(body=[cst.Expr(cst.parse_expression(f'{keep}({holder}, "{a}", {v})'))],
                                      leading_lines=updated_node.leading_lines if i == 0 else ())
            for i, (a, v) in enumerate(pairs)])

    def leave_Assign(self, original_node, updated_node):
        refused = self._plan.refused.get(id(original_node))
        if refused is not None:
            holder, written = refused
            attrs = ", ".join(f"{holder}.{a}" for a in written)
            self.remark(original_node, MP107,
                        f"{attrs} written here for the layer {holder} this method calls: a static graph "
                        f"(GRAPH_MODE) takes a sub-Cell's attributes as constants of its compilation and does not "
                        f"hand this write to {holder}'s construct (it reads what __init__ set); PyNative runs it as "
                        f"torch does. Not passed as an argument: the converter does not know every class {holder} "
                        f"can be, or the call is not in the write's block",
                        f"hand the value to {holder}'s construct as an argument ({holder}(x, H, W))")
        return updated_node


@dataclass
class _Plan:
    lines: dict[int, tuple[str, list[tuple[str, str]]]] = field(default_factory=dict)  # id of a line calling it
    writes: dict[int, tuple[str, list[tuple[str, str]]]] = field(default_factory=dict)  # id of a threaded write
    entries: dict[int, tuple[str, ...]] = field(default_factory=dict)  # id of a construct -> attributes passed in
    refused: dict[int, tuple[str, list[str]]] = field(default_factory=dict)  # a write left as it is -> holder, attrs


def _methods(cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    if not isinstance(cls.body, cst.IndentedBlock):
        return {}
    return {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}


def _self_attributes(function: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """The attributes of self a function reads and those it writes (``self.a = ``, ``self.a += ``, tuple targets)."""
    written_nodes: set[int] = set()
    reads: set[str] = set()
    writes: set[str] = set()

    def targets(target):
        for e in (target.elements if isinstance(target, (cst.Tuple, cst.List)) else ()):
            yield from targets(e.value)
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            yield target

    class Visitor(cst.CSTVisitor):
        def visit_AssignTarget(self, node):
            for t in targets(node.target):
                written_nodes.add(id(t))
                writes.add(t.attr.value)

        def visit_AugAssign(self, node):
            for t in targets(node.target):
                writes.add(t.attr.value)

        def visit_AnnAssign(self, node):
            for t in targets(node.target):
                written_nodes.add(id(t))
                writes.add(t.attr.value)

        def visit_Attribute(self, node):
            if isinstance(node.value, cst.Name) and node.value.value == "self" and id(node) not in written_nodes:
                reads.add(node.attr.value)

    walk(function, Visitor())
    return reads, writes


def _threadable(cls: cst.ClassDef) -> tuple[cst.FunctionDef | None, frozenset[str]]:
    """A layer class's construct and the attributes it may take as arguments: read there, read or written by no
    other method but ``__init__``; none when construct takes ``*args``/``**kwargs``."""
    methods = _methods(cls)
    entry = next((methods[n] for n in _ENTRIES if n in methods), None)
    if entry is None or isinstance(entry.params.star_arg, cst.Param) or entry.params.star_kwarg is not None \
            or entry.params.kwonly_params:
        return None, frozenset()
    reads, writes = _self_attributes(entry)
    elsewhere: set[str] = set()
    for name, method in methods.items():
        if method is entry or name == "__init__":
            continue
        r, w = _self_attributes(method)
        elsewhere |= r | w
    return entry, frozenset(reads - writes - elsewhere)


def _built_classes(init: cst.FunctionDef | None, name: str, module_classes: set[str]) -> set[str] | None:
    """The model classes ``__init__`` builds ``self.<name>`` from (``self.blocks = nn.ModuleList([Block(...) ...])``,
    ``self.blocks.append(Block(...))``); None when it is never built there."""
    if init is None:
        return None
    values: list[cst.CSTNode] = []

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node):
            if any(code_of(t.target) == f"self.{name}" for t in node.targets):
                values.append(node.value)

        def visit_Call(self, node):
            func = node.func
            if isinstance(func, cst.Attribute) and code_of(func.value) == f"self.{name}" \
                    and func.attr.value in ("append", "extend", "insert"):
                values.append(node)

    walk(init, Visitor())
    if not values:
        return None
    found: set[str] = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node):
            if isinstance(node.func, cst.Name) and node.func.value in module_classes:
                found.add(node.func.value)

    for value in values:
        walk(value, Calls())
    return found


def _holder_attribute(holder: str, loops: list[cst.For]) -> str | None:
    """``self.blocks`` for ``blk`` looping over it (or over ``enumerate(self.blocks)``), ``self.x`` for itself: the
    attribute of self holding the layer; None otherwise."""
    if holder.startswith("self.") and holder.count(".") == 1:
        return holder[5:]
    for loop in reversed(loops):
        it = loop.iter
        names = target_names(loop.target)
        if isinstance(loop.target, cst.Name) and loop.target.value == holder:
            pass
        elif isinstance(loop.target, cst.Tuple) and len(loop.target.elements) == 2 \
                and code_of(loop.target.elements[1].value) == holder and isinstance(it, cst.Call) \
                and last_name(it.func) == "enumerate" and len(it.args) == 1:
            it = it.args[0].value
        elif holder in names:
            return None
        else:
            continue
        code = code_of(it)
        return code[5:] if code.startswith("self.") and code.count(".") == 1 else None
    return None


def _written(assign: cst.Assign) -> tuple[str, list[str], list[cst.BaseExpression] | None] | None:
    """``blk.H, blk.W = H, W``: the holder, the attributes and the values (None when they do not pair up)."""
    if len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    if not all(isinstance(e, cst.Attribute) and e.attr.value != "data" for e in elements):
        return None
    holders = {code_of(e.value) for e in elements}
    if len(holders) != 1:
        return None
    value = assign.value
    if isinstance(target, (cst.Tuple, cst.List)):
        values = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) \
            and len(value.elements) == len(elements) and not any(isinstance(e, cst.StarredElement)
                                                                for e in value.elements) else None
    else:
        values = [value]
    return holders.pop(), [e.attr.value for e in elements], values


def _calling_lines(stmt: cst.CSTNode, holder: str) -> list[cst.SimpleStatementLine] | None:
    """The lines of a statement that call the layer (``holder(...)``, ``checkpoint(holder, ...)``); None when a call
    stands elsewhere (a loop's or an if's header), where the arguments are not passed."""
    found: list[cst.SimpleStatementLine] = []
    outside = False

    class Visitor(cst.CSTVisitor):
        line: cst.SimpleStatementLine | None = None

        def visit_FunctionDef(self, node):
            return False

        def visit_Lambda(self, node):
            return False

        def visit_SimpleStatementLine(self, node):
            self.line = node

        def leave_SimpleStatementLine(self, node):
            self.line = None

        def visit_Call(self, node):
            nonlocal outside
            if _calls_layer(node, holder):
                if self.line is None:
                    outside = True
                elif not found or found[-1] is not self.line:
                    found.append(self.line)

    walk(stmt, Visitor())
    return None if outside else found


def _calls_layer(call: cst.Call, holder: str) -> bool:
    return code_of(call.func) == holder or last_name(call.func) in _RECOMPUTE and bool(call.args) \
        and code_of(call.args[0].value) == holder


class _PassArguments(cst.CSTTransformer):
    """Adds ``_mp_<attribute>=<value>`` to each call of the layer in a line."""

    def __init__(self, holder: str, pairs: list[tuple[str, str]]) -> None:
        super().__init__()
        self.holder = holder
        self.pairs = pairs

    def leave_Call(self, original_node, updated_node):
        if not _calls_layer(updated_node, self.holder) or any(
                a.keyword is not None and a.keyword.value.startswith("_mp_") for a in updated_node.args):
            return updated_node
        return updated_node.with_changes(args=[*updated_node.args, *(
            cst.Arg(cst.parse_expression(value), keyword=cst.Name(f"_mp_{attr}"), equal=NO_SPACE_EQUAL)
            for attr, value in self.pairs)])


def _called_receivers(node: cst.FunctionDef) -> frozenset[str]:
    """The layers a method calls by a name or an attribute of self other than itself (``blk(x)``, ``self.block(x)``),
    as written."""
    found: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Name) and func.value not in ("self", "cls") \
                    or isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                    and func.value.value == "self":
                found.add(code_of(func))

    walk(node.body, Visitor())
    return frozenset(found)


def _names(expr: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def visit_Name(self, node):
            found.add(node.value)

    walk(expr, Visitor())
    return found


def _plan(module: cst.Module, module_classes: set[str]) -> _Plan:
    plan = _Plan()
    classes = {s.name.value: s for s in module_level(module.body)
               if isinstance(s, cst.ClassDef) and s.name.value in module_classes}
    if not classes:
        return plan
    threadable = {name: _threadable(cls) for name, cls in classes.items()}
    passed: dict[str, set[str]] = {}  # class -> attributes its construct takes
    for cls in classes.values():
        methods = _methods(cls)
        init = methods.get("__init__")
        for name, method in methods.items():
            if name == "__init__":
                continue
            called = _called_receivers(method)
            for block, loops in _blocks(method):
                for i, stmt in enumerate(block):
                    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                            and isinstance(stmt.body[0], cst.Assign)):
                        continue
                    written = _written(stmt.body[0])
                    if written is None or written[0] not in called or written[0] == "self":
                        continue
                    holder, attrs, values = written
                    calls = _threaded_calls(block[i + 1:], holder, values)
                    attribute = _holder_attribute(holder, loops)
                    built = _built_classes(init, attribute, module_classes) if attribute else None
                    if not calls or not built or any(
                            b not in classes or threadable[b][0] is None or not set(attrs) <= threadable[b][1]
                            for b in built):
                        plan.refused[id(stmt.body[0])] = (holder, attrs)
                        continue
                    pairs = [(a, code_of(v)) for a, v in zip(attrs, values)]
                    plan.writes[id(stmt.body[0])] = (holder, pairs)
                    for line in calls:
                        plan.lines[id(line)] = (holder, pairs)
                    for b in built:
                        passed.setdefault(b, set()).update(attrs)
    for name, attrs in passed.items():
        entry = threadable[name][0]
        code = code_of(entry.body)  # the arguments in the order construct first reads the attributes

        def first_read(attr: str, code=code) -> tuple[int, str]:
            at = code.find(f"self.{attr}")
            return (at if at >= 0 else len(code), attr)

        plan.entries[id(entry)] = tuple(sorted(attrs, key=first_read))
    return plan


def _threaded_calls(following: list, holder: str, values) -> list[cst.SimpleStatementLine]:
    """The lines calling ``holder`` in the statements after its write, up to a statement rebinding the layer or what
    the values read; none when the values do not pair up with the attributes or a call stands outside a line."""
    if values is None:
        return []
    read = set().union(*(_names(v) for v in values)) | {holder.split(".")[0]} - {"self"}
    lines: list[cst.SimpleStatementLine] = []
    for stmt in following:
        rebinds = bool(bindings_in_scope(stmt) & read)
        if rebinds and not isinstance(stmt, cst.SimpleStatementLine):
            break  # a block that rebinds them may do so before its call
        found = _calling_lines(stmt, holder)  # a line's call reads them before its targets are bound
        if found is None:
            return []
        lines += found
        if rebinds:
            break
    return lines


def _blocks(function: cst.FunctionDef):
    """Every statement block of a function (its body, loop and if bodies) with the ``for`` loops around it, not
    entering nested functions or classes."""
    found: list[tuple[list, list]] = []

    def visit(block, loops):
        body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
        found.append((body, loops))
        for stmt in body:
            inner = loops + [stmt] if isinstance(stmt, cst.For) else loops
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            for part in (getattr(stmt, "body", None), getattr(stmt, "orelse", None), *getattr(stmt, "handlers", ()),
                         getattr(stmt, "finalbody", None)):
                while isinstance(part, cst.If):  # elif
                    visit(part.body, inner)
                    part = part.orelse
                if part is None:
                    continue
                block = part if isinstance(part, cst.IndentedBlock) else getattr(part, "body", None)
                if isinstance(block, cst.IndentedBlock):
                    visit(block, inner)

    visit(function.body, [])
    return found
