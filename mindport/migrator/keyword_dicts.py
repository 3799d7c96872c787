"""``**`` keyword arguments of a torch call written out, when the dict is known from the code (a pass before the rules).

lucidrains' model files give a tensor factory its device and dtype through a dict:

* a module-level helper returning a dict display: ``def to(x): return {'device': x.device, 'dtype': x.dtype}``,
  then ``torch.zeros((b, l, 1), **to(x))`` (halonet-pytorch);
* a local bound once to a dict display: ``dd = {'device': device, 'dtype': dtype}``, then
  ``torch.zeros((b, h, l, 1), **dd)`` (bottleneck-transformer-pytorch).

The mapping tables see ``**`` as arguments they cannot read, so the call went to mindport's run-time adapter, which a
static graph refuses ("in GRAPH_MODE an adapter of a torch function takes one positional argument and no keyword").
Python passes exactly the dict's items as keywords, so the call is the same call with them written out:
``torch.zeros((b, l, 1), device=x.device, dtype=x.dtype)``, which the tables then convert natively.

A local may also be bound to ``dict(device=device, dtype=dtype)`` (timm's csatv2; ``dict`` not rebound in the
function or the module), and its values may be any expression (timm's deit:
``dd = {'device': kwargs.get('device', None), ...}``): a value that is not a plain read, or reads a name the function
binds again, is written as the item of the dict itself, ``torch.empty(1, d, device=dd['device'], dtype=dd['dtype'])``
-- the dict is evaluated once where it is bound and never changed (it is read only as ``**dd``), so the item is the
value ``**dd`` passed.

Written out only when the dict is certain: every key a string literal naming an identifier, no ``**`` inside the
display, no key repeated or also given in the call. For a helper: each value a name, an attribute of a name or a
literal (reading it again at the call reads the same value), the function is defined once at module level, its body
is one ``return`` of the display (a docstring aside), it takes positional parameters only, the call passes one plain
name per parameter, and every name in the values is a parameter. For a local: the assignment is a statement of the
function's own body (not under an ``if``/loop), the name is bound nowhere else in the function and read only as
``**name`` in calls; a value is written out as itself when it is a plain read of names bound at most once in the
function, otherwise as ``name['key']``. Only calls of torch
(the callee's first name is a top-level torch import: ``torch``, ``F``, ``nn``) are rewritten; the helper and the
local stay as written.
"""
from __future__ import annotations

import keyword

import libcst as cst

from mindport.migrator.syntax import module_code, target_names
from mindport.migrator.walk import transform, walk

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def keyword_dict_arguments(module: cst.Module, torch_roots: frozenset[str]) -> cst.Module:
    """The module with ``**<known dict>`` arguments of torch calls written out as keywords (module docstring)."""
    if not torch_roots or "**" not in module_code(module):
        return module
    helpers: dict[str, tuple] = {}
    defined: dict[str, int] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            defined[stmt.name.value] = defined.get(stmt.name.value, 0) + 1
            found = _returned_dict(stmt)
            if found is not None:
                helpers[stmt.name.value] = found
    helpers = {name: found for name, found in helpers.items() if defined[name] == 1}
    module_bindings = _Bindings()
    walk(module, module_bindings)
    return transform(module, _WriteOut(torch_roots, helpers, "dict" in module_bindings.bound))


def _items(display, plain: bool = True, dict_call: bool = False) -> list | None:
    """The (key, value) pairs of a dict display whose keys are identifier string literals (values plain reads unless
    not ``plain``); with ``dict_call``, of a ``dict(key=value, ...)`` call too."""
    if dict_call and isinstance(display, cst.Call) and isinstance(display.func, cst.Name) \
            and display.func.value == "dict":
        if not display.args or any(a.star or a.keyword is None for a in display.args):
            return None
        pairs = [(a.keyword.value, a.value) for a in display.args]
    elif isinstance(display, cst.Dict):
        pairs = []
        for element in display.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            pairs.append((element.key.evaluated_value, element.value))
    else:
        return None
    items = []
    for key, value in pairs:
        if not isinstance(key, str) or not key.isidentifier() or keyword.iskeyword(key) \
                or (plain and not _plain(value)) or key in (k for k, _ in items):
            return None
        items.append((key, value))
    return items or None


def _plain(expr) -> bool:
    """A name, an attribute chain on a name, or a literal: reading it twice reads the same value."""
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return _plain(expr.value) and not isinstance(expr.value, (cst.SimpleString, cst.Integer, cst.Float))
    return isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float))


def _returned_dict(function: cst.FunctionDef):
    """(parameter names, items) of ``def f(a, b): return {...}``; None for anything else."""
    params = function.params
    if params.posonly_params or params.kwonly_params or isinstance(params.star_arg, cst.Param) \
            or params.star_kwarg is not None or any(p.default is not None for p in params.params) \
            or function.decorators or not isinstance(function.body, cst.IndentedBlock):
        return None
    body = list(function.body.body)
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1 \
            or not isinstance(body[0].body[0], cst.Return):
        return None
    items = _items(body[0].body[0].value)
    names = tuple(p.name.value for p in params.params)
    if items is None or any(n not in names for _, v in items for n in _names(v)):
        return None
    return names, items


def _names(expr) -> set[str]:
    found: set[str] = set()

    class _Find(cst.CSTVisitor):
        def visit_Name(self, node):
            found.add(node.value)

        def visit_Attribute(self, node):
            walk(node.value, self)
            return False

    walk(expr, _Find())
    return found


class _Bindings(cst.CSTVisitor):
    """Per name, how often a function binds it (parameters, assignment targets, loop and with targets, del) and how
    often it is read as ``**name`` in a call; nested functions, classes and lambdas are not entered."""

    def __init__(self) -> None:
        super().__init__()
        self.bound: dict[str, int] = {}
        self.starred: dict[str, int] = {}
        self.reads: dict[str, int] = {}

    def _bind(self, target) -> None:
        for name in target_names(target):
            self.bound[name] = self.bound.get(name, 0) + 1

    def visit_Param(self, node):
        self.bound[node.name.value] = self.bound.get(node.name.value, 0) + 1

    def visit_AssignTarget(self, node):
        self._bind(node.target)

    def visit_AugAssign(self, node):
        self._bind(node.target)

    def visit_AnnAssign(self, node):
        self._bind(node.target)

    def visit_For(self, node):
        self._bind(node.target)

    def visit_CompFor(self, node):
        self._bind(node.target)

    def visit_AsName(self, node):
        self._bind(node.name)

    def visit_NamedExpr(self, node):
        self._bind(node.target)

    def visit_Del(self, node):
        self._bind(node.target)

    def visit_Arg(self, node):
        if node.star == "**" and isinstance(node.value, cst.Name):
            self.starred[node.value.value] = self.starred.get(node.value.value, 0) + 1

    def visit_Name(self, node):
        self.reads[node.value] = self.reads.get(node.value, 0) + 1

    def on_visit(self, node) -> bool:
        if isinstance(node, _NESTED) and self._entered:
            return False
        self._entered = True
        return super().on_visit(node)

    _entered = False


class _WriteOut(cst.CSTTransformer):
    def __init__(self, roots: frozenset[str], helpers: dict, dict_rebound: bool = False) -> None:
        super().__init__()
        self._roots = roots
        self._helpers = helpers
        self._dict_rebound = dict_rebound  # the module binds `dict`: dict(...) may not be the builtin
        self._locals: list[dict] = []  # per enclosing function: name -> items of a certain local dict
        self._bound: list[dict] = []  # per enclosing function: the names it binds (a local `to` hides the helper)

    def visit_FunctionDef(self, node):
        bindings = _Bindings()
        walk(node, bindings)
        known = {}
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for stmt in body:
            if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                    and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1
                    and isinstance(stmt.body[0].targets[0].target, cst.Name)):
                continue
            name = stmt.body[0].targets[0].target.value
            items = _items(stmt.body[0].value, plain=False,
                           dict_call=not self._dict_rebound and not bindings.bound.get("dict"))
            if items is None or bindings.bound.get(name) != 1 \
                    or bindings.reads.get(name, 0) != 1 + bindings.starred.get(name, 0):
                continue
            known[name] = [(k, v if _plain(v) and all(bindings.bound.get(n, 0) <= 1 for n in _names(v))
                            else cst.Subscript(value=cst.Name(name), slice=[cst.SubscriptElement(
                                cst.Index(cst.SimpleString(repr(k))))])) for k, v in items]
        self._locals.append(known)
        self._bound.append(bindings.bound)

    def leave_FunctionDef(self, original_node, updated_node):
        self._locals.pop()
        self._bound.pop()
        return updated_node

    def leave_Call(self, original_node, updated_node):
        root = updated_node.func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not (isinstance(root, cst.Name) and root.value in self._roots) \
                or not any(a.star == "**" for a in updated_node.args):
            return updated_node
        given = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        args = []
        for arg in updated_node.args:
            items = self._known(arg) if arg.star == "**" else None
            if items is None or any(k in given for k, _ in items):
                args.append(arg)
                continue
            given |= {k for k, _ in items}
            args += [cst.Arg(value=v, keyword=cst.Name(k), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
                for k, v in items]
        if len(args) == len(updated_node.args) and all(a is b for a, b in zip(args, updated_node.args)):
            return updated_node
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        return updated_node.with_changes(args=args)

    def _known(self, arg: cst.Arg):
        value = arg.value
        if isinstance(value, cst.Name):
            return self._locals[-1].get(value.value) if self._locals else None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self._helpers \
                and not any(value.func.value in bound for bound in self._bound):
            names, items = self._helpers[value.func.value]
            if len(value.args) != len(names) or any(a.keyword is not None or a.star or not isinstance(a.value, cst.Name)
                                                    for a in value.args):
                return None
            mapping = {n: a.value for n, a in zip(names, value.args)}
            return [(k, v.visit(_Rename(mapping))) for k, v in items]
        return None


class _Rename(cst.CSTTransformer):
    def __init__(self, mapping: dict) -> None:
        super().__init__()
        self._mapping = mapping

    def leave_Attribute(self, original_node, updated_node):
        return updated_node.with_changes(attr=original_node.attr)  # x.device: only the receiver is a parameter

    def leave_Name(self, original_node, updated_node):
        return self._mapping.get(original_node.value, updated_node)
