"""What ``TrainingLoopRule`` reads off a loop before rewriting it: the names a region reads and writes, the calls of
a node's own scope, a statement's call and a method call's receiver, and a few questions about a tree (does it set
train mode, does it contain a node)."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import all_nodes
from mindport.migrator.scopes import dotted_name
from mindport.migrator.syntax import code_of, module_code, target_names
from mindport.migrator.walk import walk


def _expr_call(stmt) -> cst.Call | None:
    """The call of an expression statement ``f(...)`` (one statement on the line), else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, cst.Call):
        return stmt.body[0].value
    return None


def _receiver_name(call: cst.Call) -> str | None:
    return dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None


class _Names(cst.CSTVisitor):
    """Names read (in order) and names assigned by a list of statements (walked with ``walk.walk``: no rebuilding,
    no whitespace)."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: list[str] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False

    def visit_Assign(self, node: cst.Assign) -> bool:
        walk(node.value, self)
        for target in node.targets:
            self._target(target.target)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        walk(node.target, self)
        walk(node.value, self)
        self._target(node.target)
        return False

    def _target(self, target) -> None:
        if isinstance(target, cst.Name):
            self.writes.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        else:
            walk(target, self)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        """A lambda reads what its body reads but its own parameters (and its defaults)."""
        params = node.params
        own = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        own |= {p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
        for param in (*params.params, *params.kwonly_params):
            if param.default is not None:
                walk(param.default, self)
        body = _names([node.body])
        self.reads.extend(n for n in body.reads if n not in own)
        return False

    def _comprehension(self, node, parts) -> bool:
        """A comprehension reads what it reads but its own loop variables (``[sum(r[i:]) for i in ...]`` does not
        read the ``i`` of a later ``for i in ...``)."""
        own: set[str] = set()
        reads: list[str] = []
        clause = node.for_in
        while clause is not None:
            own |= set(_names([clause.target]).reads)
            reads += _names([clause.iter]).reads
            reads += [n for cond in clause.ifs for n in _names([cond.test]).reads]
            clause = clause.inner_for_in
        reads += _names(parts).reads
        self.reads.extend(n for n in reads if n not in own)
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._comprehension(node, [node.key, node.value])

    def visit_Name(self, node: cst.Name) -> None:
        self.reads.append(node.value)


def _names(nodes) -> _Names:
    collector = _Names()
    for node in nodes:
        walk(node, collector)
    return collector


def _own_calls(node: cst.CSTNode):
    """Calls in ``node``, not descending into nested loops or definitions."""
    found: list[cst.Call] = []

    class _Walk(cst.CSTVisitor):
        def visit_For(self, n) -> bool:
            return n is node

        def visit_While(self, n) -> bool:
            return n is node

        def visit_FunctionDef(self, n) -> bool:
            return False

        def visit_Call(self, n) -> None:
            found.append(n)

    walk(node, _Walk())
    return found


def _handle_subtree(ctx, node: cst.CSTNode) -> None:
    ctx.handled.add(id(node))
    for child in node.children:
        _handle_subtree(ctx, child)


def _sets_train_mode(node: cst.CSTNode) -> bool:
    """Does the code call ``x.train(...)`` or ``x.set_train(...)`` (not: mention it in a docstring or comment)?"""
    text = code_of(node) if not isinstance(node, cst.Module) else module_code(node)
    if ".train(" not in text and "set_train(" not in text:
        return False
    found = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call) -> None:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("train", "set_train"):
                found.append(call)

    walk(node, _Calls())
    return bool(found)


def _contains(tree: cst.CSTNode, target: cst.CSTNode) -> bool:
    if tree is target:
        return True
    return any(_contains(child, target) for child in tree.children)


def _path_to(tree: cst.CSTNode, target: cst.CSTNode) -> list[cst.CSTNode] | None:
    """The nodes from ``tree`` down to ``target`` (both included), or None when ``target`` is not in ``tree``."""
    if tree is target:
        return [tree]
    for child in tree.children:
        if (path := _path_to(child, target)) is not None:
            return [tree, *path]
    return None


def _bound_only_elsewhere(scope: cst.CSTNode, anchor: cst.CSTNode, name: str) -> bool:
    """Is every binding of ``name`` in ``scope`` (an assignment to it) in a branch of an ``if`` other than the one
    holding ``anchor``, with no loop around that ``if`` inside the scope (an earlier turn could have bound it)? Then
    the name is never bound where ``anchor`` runs. TRADES' ``trades_loss`` makes ``optimizer_delta`` in its ``l_2``
    branch only; the ``l_inf`` branch's step must not name it (UnboundLocalError). False when nothing binds it (a
    parameter, a global) or a binding may reach the anchor."""
    at = _path_to(scope, anchor)
    if at is None:
        return False
    bindings = [a for a in all_nodes(scope, cst.Assign) if any(name in target_names(t.target) for t in a.targets)]
    if not bindings:
        return False
    for binding in bindings:
        path = _path_to(scope, binding)
        if path is None:
            return False
        common = 0
        while common < min(len(path), len(at)) and path[common] is at[common]:
            common += 1
        fork = path[common - 1]
        if not isinstance(fork, cst.If) or common >= len(path) or common >= len(at) \
                or any(isinstance(n, (cst.For, cst.While)) for n in at[1:common]):
            return False
        if (path[common] is fork.body) == (at[common] is fork.body) or path[common] is fork.test \
                or at[common] is fork.test:
            return False
    return True
