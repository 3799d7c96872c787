"""No half-converted line: a statement with a site the converter could not convert keeps its exact torch meaning.

The rules rewrite a statement's sites one by one, so a flagged statement could end half torch, half MindSpore:
``nn.Conv2d(c, c, 1, bias=False, weird=1)  # mindport: MP102`` under ``from mindspore import nn`` passes torch's
arguments to MindSpore's class, and ``torch.finfo(ms.float32)`` a MindSpore dtype to torch. Neither runs. So the
engine puts the flagged statement back as it was written, with the torch names whose meaning the conversion changed
fully qualified (``nn.Conv2d`` -> ``torch.nn.Conv2d`` where ``nn`` is now MindSpore's; ``act`` -> ``torch.nn.functional
.relu`` where ``act = F.relu`` was rewritten), keeps ``import torch`` and the imports of the other names it uses
(where they are: an optional import guarded by ``try`` stays guarded); the ``# mindport:`` comment says what to
rewrite by hand.

The unit is the simple statement (one line of code, however many physical lines). A compound statement keeps its
body converted; only the part of its header that holds the flagged site goes back: the ``if``/``while`` test, the
``for`` target and iterable, one ``with`` item, one decorator, parameter or return annotation of a ``def``, one base
or keyword of a ``class``, one ``except`` type.
"""
from __future__ import annotations

import libcst as cst

from mindport.migrator.walk import parse_expression, transform, walk
from mindport.names import Scope, is_torch, torch_package


def qualify(node: cst.CSTNode, scope: Scope, scopes: dict[int, Scope], roots: set[str], kept: set[str],
            taken: frozenset[str]) -> cst.CSTNode:
    """``node`` (an original, unconverted node) with its torch names made safe: a name whose meaning the conversion
    changed is written as its qualified torch name (``nn.Conv2d`` -> ``torch.nn.Conv2d`` where ``nn`` is in ``taken``,
    the names converted code uses for MindSpore; ``act`` -> ``torch.nn.functional.relu`` where ``act = F.relu`` was
    rewritten), adding its root package (``torch`` ...) to ``roots``; any other name bound by an import keeps its
    spelling and goes into ``kept``, so that import stays where it is (also inside a ``try`` that guards an optional
    package)."""
    return transform(node, _Qualify(scope, scopes, roots, kept, taken))


class _Qualify(cst.CSTTransformer):
    def __init__(self, scope: Scope, scopes: dict[int, Scope], roots: set[str], kept: set[str],
                 taken: frozenset[str]) -> None:
        super().__init__()
        self._scopes = [scope]
        self._all = scopes
        self._roots = roots
        self._kept = kept
        self._taken = taken
        self._skip: set[int] = set()  # names that are not references: attribute names, keywords, targets

    def on_visit_attribute(self, node, attribute) -> None:
        return None

    def on_leave_attribute(self, original_node, attribute) -> None:
        return None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skip.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self._skip.add(id(node.name))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._skip.add(id(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._skip.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._skip.add(id(node.target))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._skip.add(id(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._skip.add(id(node.target))

    def visit_Global(self, node) -> bool:
        return False

    def visit_Nonlocal(self, node) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._scopes.append(self._all.get(id(node), self._scopes[-1]))

    def leave_Lambda(self, original_node, updated_node):
        self._scopes.pop()
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name):
        if id(original_node) in self._skip:
            return updated_node
        name = original_node.value
        scope = self._scopes[-1]
        found, qual = scope.lookup(name)
        if not found or not (is_torch(qual) or torch_package(qual) is not None):
            return updated_node
        if is_torch(qual) and (name in self._taken or scope.is_alias_name(name)):
            root = qual.split(".", 1)[0]
            self._roots.add(root)
            if qual == root:
                return updated_node
            return parse_expression(qual).with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        self._kept.add(name)  # an import's name that the conversion leaves alone: its import stays
        return updated_node


def contains(node: cst.CSTNode, ids: set[int]) -> bool:
    """Does ``node`` or a node inside it have one of these ids?"""
    found = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, inner) -> bool:
            if id(inner) in ids:
                found.append(inner)
            return not found

    walk(node, _Find())
    return bool(found)


def revert_header(original, updated, flagged: set[int], keep):
    """A compound statement whose header holds flagged sites: each header part holding one goes back to ``keep(part)``
    (the original part, torch names qualified); the body stays converted. Returns (statement, parts reverted)."""
    if type(updated) is not type(original):
        return updated, 0
    reverted = 0

    def one(orig_part, new_part):
        nonlocal reverted
        if orig_part is None or not isinstance(orig_part, cst.CSTNode) or not contains(orig_part, flagged):
            return new_part
        reverted += 1
        return keep(orig_part)

    def many(orig_parts, new_parts):
        if len(orig_parts) != len(new_parts):
            return new_parts
        return [one(o, n) for o, n in zip(orig_parts, new_parts)]

    changes: dict = {}
    if isinstance(original, (cst.If, cst.While)):
        changes["test"] = one(original.test, updated.test)
    elif isinstance(original, cst.For):
        changes.update(target=one(original.target, updated.target), iter=one(original.iter, updated.iter))
    elif isinstance(original, cst.With):
        changes["items"] = many(original.items, updated.items)
    elif isinstance(original, cst.FunctionDef):
        o, n = original.params, updated.params
        params = n.with_changes(
            posonly_params=many(o.posonly_params, n.posonly_params), params=many(o.params, n.params),
            kwonly_params=many(o.kwonly_params, n.kwonly_params),
            star_arg=one(o.star_arg, n.star_arg) if isinstance(o.star_arg, cst.Param) else n.star_arg,
            star_kwarg=one(o.star_kwarg, n.star_kwarg))
        changes.update(decorators=many(original.decorators, updated.decorators), params=params)
        if original.returns is not None and updated.returns is not None:
            changes["returns"] = one(original.returns, updated.returns)
    elif isinstance(original, cst.ClassDef):
        if id(original) in flagged:  # the class itself is flagged (an autograd.Function left as is): its bases
            flagged = flagged | {id(b) for b in (*original.bases, *original.keywords)}
        changes.update(decorators=many(original.decorators, updated.decorators),
                       bases=many(original.bases, updated.bases), keywords=many(original.keywords, updated.keywords))
    elif isinstance(original, cst.Try) and len(original.handlers) == len(updated.handlers):
        changes["handlers"] = [n.with_changes(type=one(o.type, n.type)) if o.type is not None else n
                               for o, n in zip(original.handlers, updated.handlers)]
    if not reverted:
        return updated, 0
    return updated.with_changes(**changes), reverted
