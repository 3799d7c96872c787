"""Small LibCST helpers the rules share: reading a call's parts, building method calls, printing a node, walking a
module's scope."""
from __future__ import annotations

import libcst as cst

# module attributes Python binds in every module (read as plain names): never unbound, never a star import's
MODULE_NAMES = frozenset({"__name__", "__file__", "__doc__", "__package__", "__spec__", "__loader__", "__path__",
                          "__builtins__", "__annotations__", "__dict__", "__cached__", "__class__"})

# ``name=value`` with no spaces, as keyword arguments are written
NO_SPACE_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def code_of(node: cst.CSTNode) -> str:
    """A node's source text."""
    return cst.Module(body=[]).code_for_node(node)


_MODULE_CODE: list = [None, ""]  # the last module printed by module_code, and its text


def module_code(module: cst.Module) -> str:
    """``module.code``, printed once per module object: the pre-passes and the rules' quick text tests (``"**" in
    module.code``, ``".backward(" in ...``) asked the same unchanged module for its text six times per file
    (1-2 s of a 2,400-line file's conversion). A module is immutable: the same object prints the same text."""
    if _MODULE_CODE[0] is not module:
        _MODULE_CODE[1] = module.code
        _MODULE_CODE[0] = module
    return _MODULE_CODE[1]


def compact_source(node: cst.CSTNode) -> str:
    """A node's source text without spaces (to compare literals such as ``-0.1`` and ``- 0.1``)."""
    return code_of(node).replace(" ", "")


def method_call(node: cst.BaseExpression, name: str) -> cst.Call | None:
    """``node`` when it is a call of a method named ``name`` (``x.name(...)``), else None."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == name:
        return node
    return None


def receiver(call: cst.Call) -> cst.BaseExpression:
    """``x`` in ``x.method(...)``."""
    return call.func.value  # type: ignore[union-attr]


def method(receiver: cst.BaseExpression, name: str, args=()) -> cst.Call:
    """The call ``receiver.name(*args)``."""
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(name)), args=list(args))


def decorator_func(node: cst.Decorator) -> cst.BaseExpression:
    """``f`` in ``@f`` and in ``@f(...)``."""
    return node.decorator.func if isinstance(node.decorator, cst.Call) else node.decorator


def target_names(target) -> list[str]:
    """The names an assignment target binds: ``a``, ``(a, [b, c])`` and ``*rest``; attributes and subscripts bind
    none."""
    return [name.value for name in target_name_nodes(target)]


def target_name_nodes(target) -> list[cst.Name]:
    """:func:`target_names` as the Name nodes."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in target_name_nodes(e.value)]
    if isinstance(target, cst.StarredElement):
        return target_name_nodes(target.value)
    return []


def own_bindings(node: cst.CSTNode) -> set[str]:
    """The names this node itself binds (not its children): assignment, loop, ``:=``, ``as`` targets, a def or class
    name, an import's names (``import a.b`` binds ``a``). Parameters are not counted (a ``Param`` is not asked)."""
    if isinstance(node, cst.Assign):
        return set().union(*(target_names(t.target) for t in node.targets))
    if isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        return set(target_names(node.target)) if getattr(node, "value", True) is not None else set()
    if isinstance(node, (cst.For, cst.CompFor, cst.NamedExpr)):
        return set(target_names(node.target))
    if isinstance(node, cst.AsName):
        return set(target_names(node.name)) if isinstance(node.name, cst.BaseExpression) else set()
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return {node.name.value}
    if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
        return {(a.asname.name.value if a.asname else cst.Module([]).code_for_node(a.name).split(".")[0])
                for a in node.names if a.asname is None or isinstance(a.asname.name, cst.Name)}
    return set()


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def bindings_in_scope(node: cst.CSTNode) -> set[str]:
    """Every name ``node`` (a statement or an expression) binds in the scope it stands in: :func:`own_bindings` of it
    and of everything under it, without entering nested functions, classes or lambdas. A ``def``/``class`` binds its
    own name, and a name a function inside declares ``nonlocal`` is bound here too (its assignments rebind this
    scope's name). Names declared ``global``/``nonlocal`` in this scope count (an assignment to them rebinds what the
    scope reads), and so does an annotated name without a value. Comprehension targets count (conservative: Python 3 keeps them in the comprehension)."""
    from mindport.migrator.walk import syntax_children

    found: set[str] = set()
    todo = [node]
    while todo:
        child = todo.pop()
        if isinstance(child, _SCOPES):
            if not isinstance(child, cst.Lambda):
                found.add(child.name.value)
            found |= _declared_nonlocal(child)
            continue
        if isinstance(child, (cst.Global, cst.Nonlocal)):
            found.update(item.name.value for item in child.names)
        elif isinstance(child, cst.AnnAssign):  # ``v: int`` binds no value, but makes ``v`` the scope's own name
            found.update(target_names(child.target))
        found |= own_bindings(child)
        todo.extend(syntax_children(child))
    return found


def function_bindings(function: cst.FunctionDef | cst.Lambda) -> set[str]:
    """The names a function binds in its own scope: its parameters and :func:`bindings_in_scope` of its body."""
    params = function.params
    found = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
    found.update(star.name.value for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param))
    return found | bindings_in_scope(function.body)


def _declared_nonlocal(scope: cst.CSTNode) -> set[str]:
    """The names a function (or a function nested in it) declares ``nonlocal``: bound in an enclosing scope."""
    from mindport.migrator.walk import syntax_children

    found: set[str] = set()
    todo = [scope]
    while todo:
        child = todo.pop()
        if isinstance(child, cst.Nonlocal):
            found.update(item.name.value for item in child.names)
        todo.extend(syntax_children(child))
    return found


def module_level(statements):
    """The statements of a module's scope in source order: its own, and those in its top-level if/elif/else,
    try/except/else/finally and with blocks (an optional package's fallback, ``if USE_MEMORY_EFFICIENT_SiLU: class
    ...``). Function and class bodies are other scopes: not entered."""
    for stmt in statements:
        yield stmt
        if isinstance(stmt, (cst.If, cst.Try, cst.With)):
            for part in (stmt.body, *getattr(stmt, "handlers", ()), getattr(stmt, "orelse", None),
                         getattr(stmt, "finalbody", None)):
                if isinstance(part, cst.If):  # elif
                    yield from module_level([part])
                elif part is not None:
                    block = part if isinstance(part, cst.IndentedBlock) else part.body
                    if isinstance(block, cst.IndentedBlock):
                        yield from module_level(block.body)


def self_attribute_name(expr) -> str | None:
    """``self.NAME`` -> ``"NAME"``; None for anything else (a longer chain, another object, a call)."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def on_self(expr: cst.BaseExpression) -> bool:
    """``self.up``, ``self.conv.weight``: an attribute chain on ``self`` (something the object holds: a layer
    container, a Parameter)."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
        if isinstance(expr, cst.Name):
            return expr.value == "self"
    return False


def head_name(node: cst.BaseExpression) -> str:
    """The name an attribute chain starts from (``torch.nn.functional.relu`` -> ``torch``, ``cfg.mask`` -> ``cfg``,
    ``x`` -> ``x``); "" when it starts from anything else (a call, a subscript)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def is_docstring(stmt) -> bool:
    """Whether a statement line is a string literal alone (a module's, class's or function's docstring when first)."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def int_literal(expr: cst.BaseExpression) -> int | None:
    """The value of an integer literal, negative ones too (``2``, ``-1``); None for anything else."""
    if isinstance(expr, cst.Integer):
        return int(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
            and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.value)
    return None


def last_name(node: cst.BaseExpression) -> str:
    """The last name of ``a.b.C`` or ``C`` (a base class, a called class); "" for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


def pure_read(expr) -> bool:
    """Reading the expression has no effect: a name, or attributes and literal indexes of one (``self.cos``)."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Subscript) and not all(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Integer, cst.Name))
                for e in expr.slice):
            return False
        expr = expr.value
    return isinstance(expr, cst.Name)


def with_none_keywords(params: cst.Parameters, names) -> cst.Parameters:
    """``params`` with a parameter ``<name>=None`` added for each name: after the others, keyword-only after a ``*``,
    ``*args`` or other keyword-only parameters (the ``_mp_<attribute>=None`` a converted method is handed values
    through: SelfCacheTransform's threaded helpers, SubCellArgumentTransform's construct)."""
    new = [cst.Param(cst.Name(name), default=cst.Name("None"), equal=NO_SPACE_EQUAL) for name in names]
    if not new:
        return params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg:
        return params.with_changes(kwonly_params=[*params.kwonly_params, *new],
                                   star_arg=params.star_arg if params.star_arg is not cst.MaybeSentinel.DEFAULT
                                   else cst.ParamStar())
    return params.with_changes(params=[*params.params, *new])
