"""A faster walk over LibCST trees, with LibCST's own visitor and transformer protocol.

``node.visit(visitor)`` in LibCST rebuilds every node of the tree (and validates it) even when nothing changes, and
visits every whitespace and punctuation node; on model code that is most of the conversion's time. These two
functions call the same ``on_visit``/``on_leave`` hooks in the same (source) order, but

* walk only the syntax fields (names, expressions, statements, parameters …), never whitespace, parentheses, commas
  or operators, which no mindport rule looks at;
* rebuild a node only when one of its children changed (``with_changes``), so an unchanged subtree is returned as
  the very same object.

The field order of each node class is read once from LibCST's own ``_visit_and_replace_children`` (the order
LibCST visits in), so hooks see nodes in the same order as with ``node.visit``.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import re

import libcst as cst

_FIELD = re.compile(r'visit_\w+\(\s*self,\s*"(\w+)"')
_NOT_SYNTAX = frozenset({
    "leading_lines", "lines_after_decorators", "lpar", "rpar", "comma", "semicolon", "colon", "equal", "dot",
    "lbracket", "rbracket", "lbrace", "rbrace", "header", "footer", "trailing_whitespace", "operator", "asynchronous",
    "newline", "star_tok", "arrow", "walrus",
})


@functools.lru_cache(maxsize=None)
def syntax_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class that hold syntax (not whitespace or punctuation), in LibCST's visiting order."""
    try:
        source = inspect.getsource(cls._visit_and_replace_children)
    except (OSError, TypeError):  # no source available: every dataclass field, in declaration order
        names = [f.name for f in dataclasses.fields(cls)]
    else:
        names = _FIELD.findall(source)
    return tuple(n for n in names if n not in _NOT_SYNTAX and "whitespace" not in n)


@functools.lru_cache(maxsize=None)
def _is_node_type(cls: type) -> bool:
    return issubclass(cls, cst.CSTNode)  # once per class: isinstance on LibCST's ABCs is slow per node


_FIELDS: dict[type, tuple[str, ...]] = {}  # syntax_fields, without lru_cache's cost per node
_NODE_TYPES: dict[type, bool] = {}  # _is_node_type, likewise
# the hook names a visitor's own classes define -> node class -> (visit hook name or None, leave hook name or None).
# Keyed by the names, not the class: most visitors are classes defined inside a function, a new class per call.
_HOOKS: dict[frozenset, dict] = {}


def _fields(cls: type) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = syntax_fields(cls)
    return fields


def _node_type(cls: type) -> bool:
    known = _NODE_TYPES.get(cls)
    if known is None:
        known = _NODE_TYPES[cls] = _is_node_type(cls)
    return known


def _own_hooks(visitor_cls: type) -> frozenset:
    """The ``visit_X``/``leave_X`` names the visitor's own classes (not LibCST's no-op ones) define."""
    names = set()
    for base in visitor_cls.__mro__:
        if base.__module__.startswith("libcst") or base is object:
            continue
        names.update(n for n in vars(base) if n.startswith(("visit_", "leave_")))
    return frozenset(names)


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a read-only visitor, without rebuilding anything.

    A visitor that keeps LibCST's ``on_visit``/``on_leave`` (dispatch to ``visit_X``/``leave_X``) has only its own
    hooks called, looked up once per node class: LibCST's dispatch formats a name and calls a no-op hook for every
    node of every pass (a third of the fact passes' time on network_vrt.py)."""
    cls = type(visitor)
    if cls.on_visit is cst.CSTVisitor.on_visit and cls.on_leave is cst.CSTVisitor.on_leave:
        hooks = _own_hooks(cls)
        table = _HOOKS.get(hooks)
        if table is None:
            table = _HOOKS[hooks] = {"": hooks}
        _walk_hooks(node, visitor, table)
    else:
        _walk(node, visitor)


def _walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    if visitor.on_visit(node) is not False:
        for name in _fields(type(node)):
            value = getattr(node, name)
            kind = type(value)
            if kind is list or kind is tuple:
                for item in value:
                    if _node_type(type(item)):
                        _walk(item, visitor)
            elif _node_type(kind):
                _walk(value, visitor)
    visitor.on_leave(node)


def _walk_hooks(node: cst.CSTNode, visitor: cst.CSTVisitor, table: dict) -> None:
    """:func:`_walk` with CSTVisitor's own dispatch inlined: the same hooks, called the same way."""
    node_cls = type(node)
    hooks = table.get(node_cls)
    if hooks is None:
        own, visit, leave = table[""], f"visit_{node_cls.__name__}", f"leave_{node_cls.__name__}"
        hooks = table[node_cls] = (visit if visit in own else None, leave if leave in own else None)
    visit, leave = hooks
    if visit is None or getattr(visitor, visit)(node) is not False:
        for name in _fields(node_cls):
            value = getattr(node, name)
            kind = type(value)
            if kind is list or kind is tuple:
                for item in value:
                    if _node_type(type(item)):
                        _walk_hooks(item, visitor, table)
            elif _node_type(kind):
                _walk_hooks(value, visitor, table)
    if leave is not None:
        getattr(visitor, leave)(node)


# Node classes only ever held by the fields ``walk`` skips (whitespace, comments, punctuation, operators): a visitor
# with a hook for one of them needs LibCST's full visit.
_SKIPPED_KINDS = frozenset({
    "Comment", "EmptyLine", "Newline", "ParenthesizedWhitespace", "SimpleWhitespace", "TrailingWhitespace",
    "LeftParen", "RightParen", "LeftSquareBracket", "RightSquareBracket", "LeftCurlyBrace", "RightCurlyBrace",
    "Asynchronous", *(name for name, value in vars(cst._nodes.op).items()
                      if isinstance(value, type) and issubclass(value, cst.CSTNode)),
})
_OWN_DISPATCH = ("on_visit", "on_leave", "on_visit_attribute", "on_leave_attribute")


@functools.lru_cache(maxsize=None)
def _walkable(cls: type) -> bool:
    """Does :func:`walk` call every hook of this read-only visitor class that LibCST's visit would? Its own classes
    (below CSTVisitor) must neither dispatch themselves (``on_visit`` ...) nor hook a node kind :func:`walk` skips
    or a field (``visit_Call_func``)."""
    for base in cls.__mro__:
        if base in (cst.CSTVisitor, cst.CSTTransformer) or base.__module__.startswith("libcst"):
            break
        for name in vars(base):
            if name in _OWN_DISPATCH:
                return False
            kind = name[6:] if name.startswith("visit_") else name[6:] if name.startswith("leave_") else None
            if kind is not None and ("_" in kind or kind in _SKIPPED_KINDS):
                return False
    return issubclass(cls, cst.CSTVisitor)


def read(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a read-only visitor: :func:`walk` when that calls the same hooks on the same nodes
    in the same order (hooks for syntax nodes only), LibCST's own visit otherwise. LibCST's visit rebuilds and
    validates every node of the tree: on a 900-line model file each whole-file fact pass cost ~0.3 s that way."""
    if _walkable(type(visitor)):
        walk(node, visitor)
    else:
        node.visit(visitor)


def syntax_children(node: cst.CSTNode) -> list:
    """``node.children`` less whitespace, comments, punctuation and operators (which hold no syntax node), in
    LibCST's order, without the rebuild ``children`` costs (it runs ``_visit_and_replace_children``)."""
    found = []
    for name in syntax_fields(type(node)):
        value = getattr(node, name)
        if type(value) in (list, tuple):
            found.extend(item for item in value if _is_node_type(type(item)))
        elif _is_node_type(type(value)):
            found.append(value)
    return found


def find_all(node: cst.CSTNode, matcher) -> list:
    """``libcst.matchers.findall(node, matcher)`` for a matcher of syntax nodes (no metadata), through :func:`walk`."""
    from libcst import matchers

    found: list = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, child) -> bool:
            if matchers.matches(child, matcher):
                found.append(child)
            return True

    walk(node, _Find())
    return found


def transform(node: cst.CSTNode, transformer: cst.CSTTransformer):
    """``node.visit(transformer)``: the same hooks, but a node is rebuilt only when a child changed.

    Returns the new node, or a ``FlattenSentinel``/``RemovalSentinel`` as the transformer's ``on_leave`` did.
    """
    updated = node
    if transformer.on_visit(node) is not False:
        changes = {}
        for name in _fields(type(node)):
            value = getattr(node, name)
            if type(value) in (list, tuple):
                if not value:
                    continue
                items: list = []
                changed = False
                for item in value:
                    if not _node_type(type(item)):
                        items.append(item)
                        continue
                    new = transform(item, transformer)
                    if new is item:
                        items.append(item)
                        continue
                    changed = True
                    if isinstance(new, cst.FlattenSentinel):
                        items.extend(new.nodes)
                    elif not isinstance(new, cst.RemovalSentinel):
                        items.append(new)
                if changed:
                    changes[name] = tuple(items)
            elif _node_type(type(value)):
                new = transform(value, transformer)
                if new is not value:
                    changes[name] = _single(node, name, new)
        if changes:
            updated = node.with_changes(**changes)
    return transformer.on_leave(node, updated)



def replace_nodes(node: cst.CSTNode, replacements: dict[int, cst.CSTNode]):
    """``node`` with each node whose ``id`` is a key of ``replacements`` (that very object) replaced by its value,
    through :func:`transform`: only the nodes on the way to a replaced one are rebuilt."""

    class _Replace(cst.CSTTransformer):
        def on_leave(self, original_node, updated_node):
            return replacements.get(id(original_node), updated_node)

    return transform(node, _Replace())

def _single(parent: cst.CSTNode, name: str, new):
    """A replaced single child: removal means ``None`` or ``MaybeSentinel.DEFAULT`` where the field allows it."""
    if isinstance(new, cst.RemovalSentinel):
        default = {f.name: f.default for f in dataclasses.fields(parent)}.get(name, dataclasses.MISSING)
        if default is None or default is cst.MaybeSentinel.DEFAULT:
            return default
        raise ValueError(f"cannot remove the required {type(parent).__name__}.{name}")
    if isinstance(new, cst.FlattenSentinel):
        raise ValueError(f"cannot flatten several nodes into {type(parent).__name__}.{name}")
    return new


@functools.lru_cache(maxsize=8192)
def parse_expression(text: str) -> cst.BaseExpression:
    """``cst.parse_expression``, cached: rules build the same small expressions (``ops.relu``) again and again, and
    LibCST nodes are immutable, so one parsed node can stand in many places of a tree."""
    return cst.parse_expression(text)


@functools.lru_cache(maxsize=2048)
def parse_statement(text: str) -> cst.BaseStatement:
    """``cst.parse_statement``, cached (see :func:`parse_expression`)."""
    return cst.parse_statement(text)
