"""The converter rule LocalsDictTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/locals_dict.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import walk

_SCOPED = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.FunctionDef, cst.ClassDef)


class LocalsDictTransform(GraphMethodRule):
    """In a model's methods, ``locals()`` is the dict of the method's names bound by then:
    ``{"emb1": emb1, "emb2": emb2, ...}``, in the order they were bound.

    MindSpore's static graph (GRAPH_MODE, ``@jit``) gives ``locals()`` as an empty dict (UCTransNet's
    ``tmp_var = locals()[var_name]`` over ``emb1`` ... ``emb4``: "The key emb1 does not exist in the dict:{}"). The
    dict holds the parameters and the names a statement before it binds for certain (a plain assignment, a ``for``
    target inside its loop, a name both branches of an ``if``/``else`` bind); a ``locals()`` after a name that only
    may be bound (one branch of an ``if``, a loop's body after the loop, a ``try``) is left as written. A name bound
    later in the same loop's body, which Python's ``locals()`` holds from the second pass on, is not in the dict
    (reading it that way raises KeyError). A ``locals()`` in a lambda or a comprehension is left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Fuse(nn.Module):
                    def forward(self, emb1, emb2, emb3):
                        embcat = []
                        for i in range(3):
                            var_name = "emb" + str(i + 1)
                            tmp_var = locals()[var_name]
                            if tmp_var is not None:
                                embcat.append(tmp_var)
                        return torch.cat(embcat, dim=2)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                class Fuse(nn.Cell):
                    def construct(self, emb1, emb2, emb3):
                        embcat = []
                        for i in range(3):
                            var_name = "emb" + str(i + 1)
                            tmp_var = {"self": self, "emb1": emb1, "emb2": emb2, "emb3": emb3, "embcat": embcat, "i": i, "var_name": var_name}[var_name]
                            if tmp_var is not None:
                                embcat.append(tmp_var)
                        return ops.cat(mp_tensor.promoted(embcat), axis=2)
            """,
            note="The names bound by then, in a dict a graph compiles.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._dicts: dict[int, tuple[str, ...]] = {}  # id of a locals() call -> the names its dict holds

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self.compiled and _calls_locals(node):
            params = [p.name.value for p in (*node.params.posonly_params, *node.params.params,
                                              *node.params.kwonly_params)]
            for star in (node.params.star_arg, node.params.star_kwarg):
                if isinstance(star, cst.Param):
                    params.append(star.name.value)
            body = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
            _Block(self._dicts).run(body, list(params), set(params))

    def leave_Call(self, original_node, updated_node):
        names = self._dicts.get(id(original_node))
        if names is None or self.scope.lookup("locals")[0]:
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Dict([cst.DictElement(cst.SimpleString(f'"{n}"'), cst.Name(n)) for n in names])


def _is_locals(node) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "locals" \
        and not node.args


def _calls_locals(node: cst.CSTNode) -> bool:
    hits = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if _is_locals(call):
                hits.append(call)

    walk(node, Visitor())
    return bool(hits)


def _ordered_bindings(node: cst.CSTNode) -> list[str]:
    """Names a statement (not its nested blocks) binds: assignment targets, ``for`` targets, ``with ... as``,
    imports, walrus; in order."""
    names: list[str] = []

    def targets(expr) -> None:
        if isinstance(expr, cst.Name):
            names.append(expr.value)
        elif isinstance(expr, (cst.Tuple, cst.List)):
            for element in expr.elements:
                targets(element.value)
        elif isinstance(expr, cst.StarredElement):
            targets(expr.value)

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                targets(target.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                targets(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            targets(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            targets(node.target)

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            alias = node.asname.name if node.asname else node.name
            if isinstance(alias, cst.Name):
                names.append(alias.value)

        def on_visit(self, inner: cst.CSTNode) -> bool:
            return super().on_visit(inner) and not isinstance(inner, (*_SCOPED, cst.IndentedBlock))

    walk(node, Visitor())
    return names


class _Block:
    """Walks a function's statements in order, knowing the names bound for certain (``sure``, in binding order) and
    those that may be bound (``maybe``); each ``locals()`` met where every name that may be bound is bound for certain
    gets its dict."""

    def __init__(self, dicts: dict[int, tuple[str, ...]]) -> None:
        self.dicts = dicts

    def calls(self, node, sure: list[str], maybe: set[str]) -> None:
        found: list = []

        class Visitor(cst.CSTVisitor):
            def on_visit(self, inner: cst.CSTNode) -> bool:
                if isinstance(inner, _SCOPED) or isinstance(inner, cst.IndentedBlock):
                    return False
                if _is_locals(inner):
                    found.append(inner)
                return True

        walk(node, Visitor())
        if found and maybe <= set(sure):
            for call in found:
                self.dicts[id(call)] = tuple(dict.fromkeys(sure))

    def run(self, statements, sure: list[str], maybe: set[str]) -> tuple[list[str], set[str]]:
        for stmt in statements:
            sure, maybe = self.statement(stmt, sure, maybe)
        return sure, maybe

    def statement(self, stmt, sure, maybe):
        if isinstance(stmt, cst.SimpleStatementLine):
            self.calls(stmt, sure, maybe)
            if any(isinstance(s, (cst.Del, cst.Global, cst.Nonlocal)) for s in stmt.body):
                return sure, maybe | {"_mp_unknown"}  # a name unbound again: no later dict
            bound = _ordered_bindings(stmt)
            return sure + bound, maybe | set(bound)
        if isinstance(stmt, cst.For):
            self.calls(stmt.iter, sure, maybe)
            loop = _ordered_bindings(cst.Assign([cst.AssignTarget(stmt.target)], cst.Name("_")))
            _, inner_maybe = self.run(stmt.body.body, sure + loop, maybe | set(loop))
            maybe = maybe | inner_maybe  # a name bound later in the body is not in the body's dicts (see above)
            if stmt.orelse:
                _, maybe = self.run(stmt.orelse.body.body, sure, maybe)
            return sure, maybe
        if isinstance(stmt, cst.While):
            self.calls(stmt.test, sure, maybe)
            _, inner_maybe = self.run(stmt.body.body, sure, maybe)
            return sure, maybe | inner_maybe
        if isinstance(stmt, cst.If):
            self.calls(stmt.test, sure, maybe)
            body_sure, body_maybe = self.run(stmt.body.body, sure, maybe)
            if stmt.orelse is None:
                return sure, body_maybe
            if isinstance(stmt.orelse, cst.If):
                else_sure, else_maybe = self.statement(stmt.orelse, sure, maybe)
            else:
                else_sure, else_maybe = self.run(stmt.orelse.body.body, sure, maybe)
            both = [n for n in body_sure if n in set(else_sure)]
            return both, body_maybe | else_maybe
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self.calls(item.item, sure, maybe)
            bound = [n for item in stmt.items if item.asname is not None
                     for n in _ordered_bindings(cst.Assign([cst.AssignTarget(item.asname.name)], cst.Name("_")))]
            return self.run(stmt.body.body, sure + bound, maybe | set(bound))
        # try, match, nested def/class: whatever they bind may be bound
        bound = set(_ordered_bindings(stmt))

        class Visitor(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
                bound.add(node.name.value)
                return False

            def visit_ClassDef(self, node: cst.ClassDef) -> bool:
                bound.add(node.name.value)
                return False

            def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
                bound.update(_ordered_bindings(node))

        walk(stmt, Visitor())
        return sure, maybe | bound | {"_mp_unknown"}
