"""``names.py`` on the standard library's ``ast`` tree, for the fast path (``fast.py``).

The same scopes as :class:`mindport.migrator.names.ScopeBuilder`, built the same way (one pass in source order,
bindings recorded when the walk reaches them, the same ``Scope`` objects), so both paths decide alike which names
are torch's and what a local name holds. ``tests/converter/test_fast_path.py`` checks that the two builders agree.
"""
from __future__ import annotations

import ast
import re

from mindport.migrator.names import Scope, is_torch

_PYTHON_CALLS = ("list", "dict", "set", "str", "tuple", "len", "range", "int", "float", "sorted")
_LITERAL_TYPES = (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.JoinedStr, ast.ListComp, ast.DictComp, ast.SetComp)
_NAME_CONSTANTS = {True: "True", False: "False", None: "None"}  # LibCST parses these as Names


def dotted(expr: ast.AST) -> str | None:
    """``a.b.c`` for Name/Attribute chains, None for anything else."""
    parts: list[str] = []
    while type(expr) is ast.Attribute:
        parts.append(expr.attr)
        expr = expr.value
    if type(expr) is not ast.Name:
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def resolve(scope: Scope, expr: ast.AST) -> str | None:
    name = dotted(expr)
    return None if name is None else scope.resolve_dotted(name)


def resolve_torch(scope: Scope, expr: ast.AST) -> str | None:
    qual = resolve(scope, expr)
    return qual if is_torch(qual) else None


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, _LITERAL_TYPES):
        return True
    return type(node) is ast.Constant and isinstance(node.value, (str, bytes, int, float)) \
        and not isinstance(node.value, bool)


def value_kind(value: ast.AST, scope: Scope) -> str:
    """:func:`mindport.migrator.names.value_kind` on an ast node."""
    if _is_literal(value):
        return "python"
    kind = type(value)
    if kind is ast.Call:
        qual = resolve(scope, value.func)
        if qual is not None:
            return "tensor" if is_torch(qual) else "foreign"
        func = value.func
        if type(func) is ast.Attribute:
            if type(func.value) is ast.Name and func.value.id == "self":
                return "tensor"
            return receiver_kind(func.value, scope)
        if type(func) is ast.Name and func.id in _PYTHON_CALLS:
            return "python"
        return "other"
    if kind is ast.BinOp:
        kinds = {receiver_kind(value.left, scope), receiver_kind(value.right, scope)}
        return "tensor" if "tensor" in kinds else "other"
    return receiver_kind(value, scope)


def receiver_kind(expr: ast.AST, scope: Scope) -> str:
    """:func:`mindport.migrator.names.receiver_kind` on an ast node."""
    kind = type(expr)
    if kind is ast.Name:
        if expr.id in ("self", "cls"):
            return "object"
        found = scope.kind_of(expr.id)
        return "tensor" if found == "param" else found
    if kind is ast.Constant and not _is_literal(expr):
        name = _NAME_CONSTANTS.get(expr.value) if isinstance(expr.value, (bool, type(None))) else None
        return scope.kind_of(name) if name else "other"
    if kind is ast.Subscript:
        return receiver_kind(expr.value, scope)
    if kind is ast.Call or kind is ast.BinOp or _is_literal(expr):
        return value_kind(expr, scope)
    if kind is ast.Attribute and expr.attr in ("weight", "bias"):
        return "tensor"
    if kind is ast.Attribute and expr.attr in ("data", "grad") and receiver_kind(expr.value, scope) == "tensor":
        return "tensor"
    return "other"


def bind_import(scope: Scope, node: ast.Import | ast.ImportFrom) -> None:
    if type(node) is ast.Import:
        for alias in node.names:
            if alias.asname is not None:
                scope.names[alias.asname] = alias.name
            else:
                head = alias.name.split(".", 1)[0]
                scope.names[head] = head
        return
    base = None if node.level else node.module
    for alias in node.names:
        if alias.name == "*":
            return
        local = alias.asname or alias.name
        scope.names[local] = f"{base}.{alias.name}" if base else None


def child_nodes(node: ast.AST):
    """``ast.iter_child_nodes``, about twice as fast (the field names per class are looked up once)."""
    for name in field_names(type(node)):
        value = getattr(node, name, None)
        if type(value) is list:
            for item in value:
                if isinstance(item, ast.AST):
                    yield item
        elif isinstance(value, ast.AST):
            yield value


_FIELDS: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """The fields of an ast class that can hold child nodes (not ``ctx``, operators or type comments)."""
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in ("ctx", "type_comment", "op", "ops"))
    return fields


_BINDS = re.compile(r"\b(?:for|lambda)\b")


class AstScopes:
    """Scopes per function/class/lambda node (``scopes[id(node)]``), the module scope, and a copy of the module
    scope as it stood before each top-level statement (``before[i]``, for the statements the fast path hands to
    LibCST: their own scope pass must start from that state, as in one pass over the whole file)."""

    def __init__(self, tree: ast.Module, source: str | None = None) -> None:
        self.module_scope = Scope()
        self.scopes: dict[int, Scope] = {id(tree): self.module_scope}
        self.before: list[tuple[dict, set, dict]] = []
        self._stack = [self.module_scope]
        self._in_class: list[bool] = []
        # lines where an expression can bind a name (a comprehension's for, a lambda): other expressions are skipped
        self._binding_lines = set()
        if source is not None:
            import bisect

            starts = [m.end() for m in re.finditer("\n", source)]
            self._binding_lines = {bisect.bisect_right(starts, m.start()) + 1 for m in _BINDS.finditer(source)}
        self._all_expressions = source is None
        scope = self.module_scope
        for stmt in tree.body:
            self.before.append((dict(scope.names), set(scope.aliases), dict(scope.kinds)))
            self._visit(stmt)
        # every name some scope binds to torch (an import or an alias): any other name is never torch's
        self.torch_names = {name for s in self.scopes.values() for name, qual in s.names.items() if is_torch(qual)}

    @property
    def current(self) -> Scope:
        return self._stack[-1]

    def _push(self, node: ast.AST) -> Scope:
        scope = Scope(self.current)
        self.scopes[id(node)] = scope
        self._stack.append(scope)
        return scope

    def _visit(self, node: ast.AST) -> None:  # noqa: C901 - one dispatch, in the order of ScopeBuilder
        if isinstance(node, ast.expr) and not self._all_expressions:
            lines = self._binding_lines
            if not any(line in lines for line in range(node.lineno, node.end_lineno + 1)):
                return  # no comprehension or lambda on its lines: nothing in it binds a name
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            self.current.names[node.name] = None
            in_class = self._in_class[-1] if self._in_class else False
            self._in_class.append(False)
            scope = self._push(node)
            args = node.args
            static = any(type(d) is ast.Name and d.id == "staticmethod" for d in node.decorator_list)
            for i, p in enumerate((*args.posonlyargs, *args.args, *args.kwonlyargs)):
                scope.names[p.arg] = None
                scope.kinds[p.arg] = "object" if in_class and i == 0 and not static else "param"
            for p in (args.vararg, args.kwarg):
                if p is not None:
                    scope.names[p.arg] = None
            for child in (*node.decorator_list, args, *((node.returns,) if node.returns else ()), *node.body):
                self._visit(child)
            self._stack.pop()
            self._in_class.pop()
            return
        if kind is ast.ClassDef:
            self.current.names[node.name] = None
            self._push(node)
            self._in_class.append(True)
            for child in (*node.decorator_list, *node.bases, *node.keywords, *node.body):
                self._visit(child)
            self._stack.pop()
            self._in_class.pop()
            return
        if kind is ast.Lambda:
            scope = self._push(node)
            for p in node.args.args:
                scope.names[p.arg] = None
            for child in child_nodes(node):
                self._visit(child)
            self._stack.pop()
            return
        if kind is ast.Import or kind is ast.ImportFrom:
            bind_import(self.current, node)
            return
        if kind is ast.Assign:
            scope = self.current
            alias = resolve_torch(scope, node.value) if len(node.targets) == 1 else None
            value = value_kind(node.value, scope)
            for target in node.targets:
                self._bind(target, alias)
                if type(target) is ast.Name:
                    scope.kinds[target.id] = value
        elif kind is ast.AnnAssign:
            self._bind(node.target, None)
        elif kind is ast.For or kind is ast.AsyncFor:
            self._bind(node.target, None)
        elif kind is ast.withitem:
            if node.optional_vars is not None:
                self._bind(node.optional_vars, None)
        elif kind is ast.comprehension:
            self._bind(node.target, None)
        elif kind is ast.ListComp or kind is ast.SetComp or kind is ast.GeneratorExp:
            self._visit(node.elt)  # LibCST visits the element before the for clauses
            for gen in node.generators:
                self._visit(gen)
            return
        elif kind is ast.DictComp:
            self._visit(node.key)
            self._visit(node.value)
            for gen in node.generators:
                self._visit(gen)
            return
        for child in child_nodes(node):
            self._visit(child)

    def _bind(self, target: ast.AST, alias: str | None) -> None:
        kind = type(target)
        if kind is ast.Name:
            self.current.names[target.id] = alias
            if alias is not None:
                self.current.aliases.add(target.id)
            else:
                self.current.aliases.discard(target.id)
        elif kind is ast.Tuple or kind is ast.List:
            for element in target.elts:
                self._bind(element, None)
        elif kind is ast.Starred:
            self._bind(target.value, None)


def class_summary(tree: ast.Module, module_scope: Scope) -> tuple:
    """:func:`mindport.migrator.idioms.class_summary` on the ast tree."""
    from mindport.migrator.idioms import _MODULE_BASES

    return tuple((cls.name, tuple((dotted(b) or "", resolve(module_scope, b) in _MODULE_BASES) for b in cls.bases))
                 for cls in tree.body if type(cls) is ast.ClassDef)


def class_bases(body) -> dict[str, list[str]]:
    """Class name -> the last component of each base, for every class of a file (nested ones too)."""
    return {node.name: [_last_component(b) for b in node.bases] for node in _class_defs(body)}


def _class_defs(body):
    return (stmt for stmt in statements(body) if type(stmt) is ast.ClassDef)


def statements(body):
    """Every statement in a block, nested blocks included, in source order (no expression is walked)."""
    for stmt in body:
        yield stmt
        for part in ("body", "orelse", "finalbody"):
            child = getattr(stmt, part, None)
            if isinstance(child, list):
                yield from statements(child)
        for handler in getattr(stmt, "handlers", ()):
            yield from statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from statements(case.body)


def _last_component(base: ast.expr) -> str:
    if type(base) is ast.Name:
        return base.id
    if type(base) is ast.Attribute:
        return base.attr
    return ast.unparse(base).rsplit(".", 1)[-1]
