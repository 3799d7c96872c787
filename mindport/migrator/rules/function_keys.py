"""The converter rule FunctionKeyedDictTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/function_keys.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import module_level
from mindport.migrator.walk import parse_expression, parse_statement, walk

MP107 = "MP107"
_RUNTIME = "mindport.runtime.graph_safe"
# what changes a dict in place
_MUTATORS = frozenset({"update", "pop", "popitem", "clear", "setdefault", "__setitem__", "__delitem__"})


class FunctionKeyedDictTransform(GraphMethodRule):
    """A module-level dict display keyed by functions (``{F.tanh: lambda x: 1 - torch.tanh(x) ** 2, F.elu: ...}``:
    tonyduan's normalizing flows keep each non-linearity's derivative so) read by key in a model's method
    (``functional_derivatives[self.h](lin)``) is read through two tuples bound after the display,
    ``_mp_<name>_keys = tuple(<name>)`` and ``_mp_<name>_values = tuple(<name>.values())``: the read is
    ``(_mp_<name>_values[0] if key == _mp_<name>_keys[0] else ... else mp_graph_safe.missing_key(key))``.

    MindSpore's static graph (GRAPH_MODE) builds every dict it reads as a dict of its own, and takes only strings,
    numbers, types, None, constant tensors and tuples as keys: a function key fails to compile ("make_dict evaluator
    key only supports string, number, type, none, constant tensor and tuple, but got ValueAny", MindSpore 2.10).
    Comparing the key with each function and taking the value at that place compiles and picks the same value
    (the key is a Cell's setting, known while the graph compiles); a key the dict does not hold raises KeyError as
    torch's lookup does. The tuples are built once by Python when the module loads, in the dict's own order. Only
    displays of plain keys (every key a function the file defines, or a torch function) that the file never changes
    (no item write, ``update``, ``pop``, ``del``, ``global``, rebinding), read as ``name[key]`` with ``key`` a name or
    an attribute chain; any other read of such a dict in a model's method is said (MP107).

    A membership test of a name or attribute chain in a tuple or list display of such functions (``if self.h in
    (F.elu, F.leaky_relu):``) is ``(self.h == F.elu or self.h == F.leaky_relu)`` in a model's method: a graph builds
    that display as a sequence of tensors and fails to compile ("Unsupported element type[unknown] to set element
    data type for KernelTensor", MindSpore 2.10), where ``==`` of two functions compiles (measured).
    """

    MODULE_FUNCTIONS = True

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                def softsign(x):
                    return x / (1 + x.abs())


                def bent(x):
                    return (torch.sqrt(x * x + 1) - 1) / 2 + x


                DERIVATIVES = {
                    softsign: lambda x: 1 / (1 + x.abs()) ** 2,
                    bent: lambda x: x / (2 * torch.sqrt(x * x + 1)) + 1,
                }


                class Planar(nn.Module):
                    def __init__(self, h=softsign):
                        super().__init__()
                        self.h = h

                    def forward(self, x):
                        return DERIVATIVES[self.h](x)
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import math as mp_math
                from mindport.runtime import graph_safe as mp_graph_safe


                def softsign(x):
                    return x / (1 + mp_math.abs(x))


                def bent(x):
                    return (mp_math.sqrt(x * x + 1) - 1) / 2 + x


                _mp_lambda = lambda x: 1 / (1 + x.abs()) ** 2
                _mp_lambda_2 = lambda x: x / (2 * mp_math.sqrt(x * x + 1)) + 1
                DERIVATIVES = {
                    softsign: _mp_lambda,
                    bent: _mp_lambda_2,
                }
                _mp_DERIVATIVES_keys = tuple(DERIVATIVES)
                _mp_DERIVATIVES_values = tuple(DERIVATIVES.values())


                class Planar(nn.Cell):
                    def __init__(self, h=softsign):
                        super().__init__()
                        self.h = h

                    def construct(self, x):
                        return (_mp_DERIVATIVES_values[0] if self.h == _mp_DERIVATIVES_keys[0] else _mp_DERIVATIVES_values[1] if self.h == _mp_DERIVATIVES_keys[1] else mp_graph_safe.missing_key(self.h))(x)
            """,
            note="The dict's keys and values are read as tuples by position, which a static graph compiles.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self._tables: dict[str, int] = {}  # a dict keyed by functions -> its number of items
        self._fixed: set[str] = set()  # those the file never changes: read by position
        self._read: set[str] = set()  # those a model's method reads by position (their tuples are bound)
        self._said: set[tuple[int, str]] = set()

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        defs = self._defs = {s.name.value for s in module_level(node.body) if isinstance(s, cst.FunctionDef)}
        for stmt in module_level(node.body):
            table = _display(stmt)
            if table is None:
                continue
            name, display = table
            if all(isinstance(e, cst.DictElement) and self._function(e.key, defs) for e in display.elements):
                self._tables[name] = len(display.elements)
        if self._tables:
            self._fixed = set(self._tables) - _changed(node, set(self._tables))

    def _function(self, key, defs: set[str]) -> bool:
        """A key that is a function: one the file defines at module level, or torch's (``F.tanh``)."""
        if isinstance(key, cst.Name) and key.value in defs:
            return True
        qual = self.scope.resolve_torch(key) if isinstance(key, (cst.Name, cst.Attribute)) else None
        return qual is not None and qual.rpartition(".")[2][:1].islower()

    def leave_Subscript(self, original_node, updated_node):
        value = original_node.value
        if not self.compiled or not isinstance(value, cst.Name) or value.value not in self._tables:
            return updated_node
        name = value.value
        key = original_node.slice[0].slice if len(original_node.slice) == 1 else None
        if name in self._fixed and isinstance(key, cst.Index) and key.star is None and _plain(key.value):
            self._read.add(name)
            self.runtime_modules.add(_RUNTIME)
            self.ctx.converted_sites += 1
            key_code = cst.Module([]).code_for_node(updated_node.slice[0].slice.value)
            missing = f"{runtime_alias(_RUNTIME)}.missing_key"
            chain = f"{missing}({key_code})"
            for i in reversed(range(self._tables[name])):
                chain = f"_mp_{name}_values[{i}] if {key_code} == _mp_{name}_keys[{i}] else {chain}"
            return parse_expression(f"({chain})")
        return updated_node

    def leave_Comparison(self, original_node, updated_node):
        # h in (F.elu, F.leaky_relu) -> (h == F.elu or h == F.leaky_relu): a graph builds the tuple of functions as a
        # sequence of kernel tensors and fails ("Unsupported element type[unknown] ... KernelTensor")
        if not self.compiled or len(original_node.comparisons) != 1 or not _plain(original_node.left):
            return updated_node
        test = original_node.comparisons[0]
        members = test.comparator
        if not isinstance(test.operator, (cst.In, cst.NotIn)) or not isinstance(members, (cst.Tuple, cst.List)) \
                or not members.elements or any(isinstance(e, cst.StarredElement) for e in members.elements) \
                or not all(self._function(e.value, getattr(self, "_defs", set())) for e in members.elements):
            return updated_node
        code = cst.Module([]).code_for_node
        left = code(updated_node.left)
        ored = " or ".join(f"{left} == {code(e.value)}" for e in updated_node.comparisons[0].comparator.elements)
        self.ctx.converted_sites += 1
        return parse_expression(f"not ({ored})" if isinstance(test.operator, cst.NotIn) else f"({ored})")

    def leave_Name(self, original_node, updated_node):
        name = original_node.value
        if self.compiled and name in self._tables and (id(original_node), name) not in self._said \
                and name not in self._fixed | self._read:
            self._said.add((id(original_node), name))
            self.remark(original_node, MP107,
                        f"'{name}' is a dict keyed by functions: a static graph (GRAPH_MODE) builds a dict only with "
                        f"string, number, type, None, constant-tensor or tuple keys, and fails to compile here "
                        f"(make_dict evaluator key only supports ...); PyNative runs it as Python",
                        "key it by the functions' names, or read it through two tuples of its keys and values")
        return updated_node

    def leave_Module(self, original_node, updated_node):
        if not self._read:
            return updated_node
        body = []
        for stmt in updated_node.body:
            body.append(stmt)
            table = _display(stmt)
            if table is not None and table[0] in self._read:
                name = table[0]
                body.append(parse_statement(f"_mp_{name}_keys = tuple({name})\n"))
                body.append(parse_statement(f"_mp_{name}_values = tuple({name}.values())\n"))
        return updated_node.with_changes(body=body)


def _display(stmt) -> "tuple[str, cst.Dict] | None":
    """``name = {k: v, ...}`` (a statement line of one assignment to one name, a display with no ``**``)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return None
    assign = stmt.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
            or not isinstance(assign.value, cst.Dict) or not assign.value.elements:
        return None
    return assign.targets[0].target.value, assign.value


def _plain(expr) -> bool:
    """A name or an attribute chain on one (``self.h``): read twice, the same value."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


def _changed(module: cst.Module, names: set[str]) -> set[str]:
    """The names of ``names`` the file changes or binds again: an item write or ``del``, a mutating method
    (``d.update(...)``), a ``global`` declaration, a second binding at any level."""
    out: set[str] = set()
    bindings: dict[str, int] = {}

    def target(node) -> None:
        for el in (node.elements if isinstance(node, (cst.Tuple, cst.List)) else [node]):
            el = getattr(el, "value", el) if isinstance(el, (cst.Element, cst.StarredElement)) else el
            if isinstance(el, cst.Subscript) and isinstance(el.value, cst.Name) and el.value.value in names:
                out.add(el.value.value)
            elif isinstance(el, cst.Name) and el.value in names:
                bindings[el.value] = bindings.get(el.value, 0) + 1

    class Visitor(cst.CSTVisitor):
        def visit_AssignTarget(self, node) -> None:
            target(node.target)

        def visit_AugAssign(self, node) -> None:
            target(node.target)
            target(node.target)  # an update of the name itself counts as a second binding

        def visit_AnnAssign(self, node) -> None:
            target(node.target)

        def visit_Del(self, node) -> None:
            target(node.target)

        def visit_For(self, node) -> None:
            target(node.target)

        def visit_Call(self, node) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in names \
                    and func.attr.value in _MUTATORS:
                out.add(func.value.value)

        def visit_Global(self, node) -> None:
            out.update(n.name.value for n in node.names if n.name.value in names)

    walk(module, Visitor())
    return out | {n for n, count in bindings.items() if count > 1}
