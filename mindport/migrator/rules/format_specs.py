"""The converter rule FormatSpecTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/format_specs.md shows both."""
from __future__ import annotations

import string

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import receiver_kind
from mindport.migrator.syntax import code_of
from mindport.migrator.walk import parse_expression

# calls whose value is a Python number or string in both frameworks: never a tensor
_PYTHON_CALLS = frozenset({"len", "int", "float", "round", "str", "bool", "ord", "repr", "format"})
_PYTHON_METHODS = frozenset({"item", "tolist", "numel", "dim", "size", "format", "join", "upper", "lower"})
# of those, the ones whose value is a Python number (a name bound only to such values is one: _NumberFacts)
_NUMBER_CALLS = frozenset({"len", "int", "float", "round"})
_NUMBER_METHODS = frozenset({"item", "numel", "dim", "nelement", "element_size"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def spec_arguments(call: cst.Call, scope) -> set[int]:
    """The positions of ``call``'s arguments formatted with a spec: ``"{:.6f} {}".format(a, b)`` -> {0},
    ``format(x, ".2f")`` -> {0}; fields that read into a value (``{0.x}``) or convert it (``!r``) are not counted."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "format" and scope.resolve(func) is None:
        spec = call.args[1].value if len(call.args) == 2 and call.args[1].keyword is None else None
        given = isinstance(spec, cst.SimpleString) and spec.evaluated_value or spec is not None and not isinstance(
            spec, cst.SimpleString)
        return {0} if given and call.args[0].keyword is None and not call.args[0].star else set()
    if not (isinstance(func, cst.Attribute) and func.attr.value == "format"
            and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString))):
        return set()
    text = func.value.evaluated_value  # None for a concatenation holding an f-string
    if not isinstance(text, str) or any(a.star for a in call.args):
        return set()
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return set()
    positional = [i for i, a in enumerate(call.args) if a.keyword is None]
    keywords = {a.keyword.value: i for i, a in enumerate(call.args) if a.keyword is not None}
    found: set[int] = set()
    auto = 0
    for _literal, name, spec, conversion in fields:
        if name is None:
            continue
        if name == "":
            index, auto = auto, auto + 1
            target = positional[index] if index < len(positional) else None
        elif name.isdigit():
            target = positional[int(name)] if int(name) < len(positional) else None
        elif name.isidentifier():
            target = keywords.get(name)
        else:  # {0.x}, {d[k]}: the field reads into the value
            target = None
        if target is not None and spec and conversion is None:
            found.add(target)
    return found


class FormatSpecTransform(Rule):
    """A value formatted with a spec, ``f"{loss:.4f}"``, ``"{:.6f}".format(loss)`` or ``format(loss, ".4f")``,
    becomes
    ``mp_tensor.formattable(loss)`` where it may be a tensor.

    torch formats a 0-d tensor with a spec as its Python number (``Tensor.__format__`` calls ``item()``), so training
    scripts print ``loss`` itself; MindSpore's Tensor refuses any spec ("unsupported format string passed to
    Tensor.__format__"), so the converted script stopped at its first progress line. ``formattable`` hands a 0-d
    tensor's number to the spec and returns anything else unchanged. Values known to be Python numbers or strings
    (literals, ``len(...)``, ``float(...)``, ``x.item()``, sizes; arithmetic of numbers, ``sum(p.numel() for p in
    params)``, a name bound by a comprehension or a loop over ``range(...)``, or a local name every binding of which
    is a number) are left as written, as are fields without a spec, fields with a conversion (``!r``) and ``.format``
    fields that name an attribute or an item (``{0.x}``).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch


                def report(epoch, loss, correct, total, lr, batch):
                    print(f"epoch {epoch:03d} loss {loss:.4f} acc {100.0 * correct / total:.2f} n={len(batch):d}")
                    print("{:.6f} {} {lr:.1e}".format(loss, epoch, lr=lr))
                    print(f"{loss.item():.4f} {loss!r:>10}", format(loss, ".3e"))
            """,
            after="""
                from mindport.runtime import tensor as mp_tensor


                def report(epoch, loss, correct, total, lr, batch):
                    print(f"epoch {mp_tensor.formattable(epoch):03d} loss {mp_tensor.formattable(loss):.4f} acc {mp_tensor.formattable(100.0 * correct / total):.2f} n={len(batch):d}")
                    print("{:.6f} {} {lr:.1e}".format(mp_tensor.formattable(loss), epoch, lr=mp_tensor.formattable(lr)))
                    print(f"{loss.item():.4f} {loss!r:>10}", format(mp_tensor.formattable(loss), ".3e"))
            """,
            note="A value the rule cannot tell from a tensor goes through formattable (a Python number comes back as "
                 "it is); .item(), len() and fields without a spec or with !r are left alone.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._functions: list[cst.FunctionDef] = []
        self._comprehensions: list[cst.CSTNode] = []

    def visit_FunctionDef(self, node) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        return updated_node

    def visit_ListComp(self, node) -> None:
        self._comprehensions.append(node)

    def leave_ListComp(self, original_node, updated_node):
        self._comprehensions.pop()
        return updated_node

    def visit_GeneratorExp(self, node) -> None:
        self._comprehensions.append(node)

    def leave_GeneratorExp(self, original_node, updated_node):
        self._comprehensions.pop()
        return updated_node

    def leave_FormattedStringExpression(self, original_node, updated_node):
        if not updated_node.format_spec or updated_node.conversion is not None \
                or not self._may_be_tensor(original_node.expression):
            return updated_node
        return updated_node.with_changes(expression=self._wrap(updated_node.expression))

    def leave_Call(self, original_node, updated_node):
        wrap = spec_arguments(original_node, self.scope)
        args = list(updated_node.args)
        changed = False
        for i in sorted(wrap):
            if self._may_be_tensor(original_node.args[i].value):
                args[i] = args[i].with_changes(value=self._wrap(args[i].value))
                changed = True
        return updated_node.with_changes(args=args) if changed else updated_node

    def _wrap(self, expr):
        self.ctx.converted_sites += 1
        return parse_expression(f"{self.ctx.alias_for('mindport.runtime.tensor')}.formattable({code_of(expr)})")

    def _may_be_tensor(self, expr) -> bool:
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return False
        if self._number(expr, frozenset()):
            return False
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in _PYTHON_CALLS:
                return False
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _PYTHON_METHODS:
                return False
        return receiver_kind(expr, self.scope) in ("tensor", "other")

    # -- Python numbers by construction: nanoGPT's ``n = sum(p.numel() for p in params)`` then ``f"{n:,}"``,
    # whisper's ``f"<|{i * 0.02:.2f}|>" for i in range(1501)``
    def _number(self, expr, seen: frozenset[str]) -> bool:
        """Is ``expr`` a Python number by construction? A number literal; ``len``/``int``/``float``/``round`` of
        anything; ``x.numel()``, ``x.item()``, ``x.dim()``; ``sum`` of a comprehension of such; arithmetic of such; a
        name bound by a comprehension or a ``for`` over ``range(...)``, or a local name every binding of which (in the
        enclosing function, ``+=`` and the like included) is one. A parameter, an attribute or anything else: no."""
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self._number(expr.expression, seen)
        if isinstance(expr, cst.BinaryOperation):
            return isinstance(expr.operator, _ARITHMETIC) and self._number(expr.left, seen) \
                and self._number(expr.right, seen)
        if isinstance(expr, cst.Call) and not any(a.star for a in expr.args):
            func = expr.func
            if isinstance(func, cst.Attribute):
                return func.attr.value in _NUMBER_METHODS and not expr.args
            if not isinstance(func, cst.Name) or self.scope.resolve(func) is not None \
                    or self._bound_here(func.value):
                return False
            if func.value in _NUMBER_CALLS:
                return True
            if func.value == "sum" and len(expr.args) == 1 \
                    and isinstance(expr.args[0].value, (cst.GeneratorExp, cst.ListComp)):
                return self._number(expr.args[0].value.elt, seen)
            return False
        if isinstance(expr, cst.Name):
            return self._number_name(expr.value, seen)
        return False

    def _bound_here(self, name: str) -> bool:
        """Does the enclosing function bind ``name`` (a local ``sum`` or ``len``)?"""
        function = self._functions[-1] if self._functions else None
        return function is not None and name in self._bindings(function)

    def _number_name(self, name: str, seen: frozenset[str]) -> bool:
        if name in seen:
            return True  # n = n + 1: the other bindings decide
        for comp in reversed(self._comprehensions):  # the nearest comprehension binding the name decides
            loop = comp.for_in
            while loop is not None:
                if name in _target_names(loop.target):
                    return isinstance(loop.target, cst.Name) and _range_call(loop.iter, self.scope)
                loop = loop.inner_for_in
        function = self._functions[-1] if self._functions else None
        if function is None:
            return False
        params = function.params
        if name in {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)} \
                or any(isinstance(p, cst.Param) and p.name.value == name for p in (params.star_arg, params.star_kwarg)):
            return False
        values = self._bindings(function).get(name)
        if not values:
            return False
        inner = seen | {name}
        return all(v is not None and (v == "range" or self._number(v, inner)) for v in values)

    def _bindings(self, function: cst.FunctionDef) -> dict:
        """name -> the values the function's own statements bind it to (None for a binding not shown: an unpacking, a
        with, an import; "range" for the target of a ``for`` over ``range(...)``)."""
        cache = self.__dict__.setdefault("_binding_cache", {})
        found = cache.get(id(function))
        if found is not None:
            return found
        from mindport.migrator.native_facts import own_nodes

        found = {}
        for node in own_nodes(function, cst.CSTNode):
            if isinstance(node, cst.Assign):
                for t in node.targets:
                    for n in _target_names(t.target):
                        found.setdefault(n, []).append(node.value if isinstance(t.target, cst.Name) else None)
            elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                ok = isinstance(node.operator, tuple(getattr(cst, k + "Assign") for k in (
                    "Add", "Subtract", "Multiply", "Divide", "FloorDivide", "Modulo", "Power")))
                found.setdefault(node.target.value, []).append(node.value if ok else None)
            elif isinstance(node, cst.AnnAssign):
                for n in _target_names(node.target):
                    found.setdefault(n, []).append(node.value if isinstance(node.target, cst.Name) else None)
            elif isinstance(node, cst.For):
                simple = isinstance(node.target, cst.Name) and _range_call(node.iter, self.scope)
                for n in _target_names(node.target):
                    found.setdefault(n, []).append("range" if simple else None)
            elif isinstance(node, (cst.AsName, cst.NamedExpr, cst.Global, cst.Nonlocal, cst.CompFor)):
                if isinstance(node, cst.CompFor):
                    continue  # a comprehension's own names (handled by _number_name)
                names = [i.name.value for i in node.names] if isinstance(node, (cst.Global, cst.Nonlocal)) \
                    else _target_names(node.name if isinstance(node, cst.AsName) else node.target)
                for n in names:
                    found.setdefault(n, []).append(None)
            elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not function:
                found.setdefault(node.name.value, []).append(None)
        cache[id(function)] = found
        return found


def _target_names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _range_call(expr, scope) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range" \
        and scope.resolve(expr.func) is None
