"""The converter rule MapLambdaTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/map_lambda.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule

_SCOPES = (cst.FunctionDef, cst.ClassDef)


class MapLambdaTransform(Rule):
    """``map(lambda t: ..., items)`` in a method of a model class, consumed where it stands, becomes the list
    comprehension ``[... for t in items]``.

    ``q, k, v = map(lambda t: rearrange(t, ...), (q, k, v))`` and ``sum(map(lambda fn: fn(x), self.fns))`` are common
    in model code. MindSpore's static graph (GRAPH_MODE, ``@jit``) refuses a lambda that reads a name of the method
    (``The Map operator don't support Closure with free variable yet``); a list comprehension compiles, and gives the
    same values where the result is used at once: unpacked by an assignment, passed to a call, or looped over. Several
    iterables (``map(lambda a, b: a + b, xs, ys)``) are zipped. A lambda with defaults or ``*args``, a ``map`` bound to
    something else, and a map kept for later (``it = map(...)``, ``return map(...)``) are left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Attention(nn.Module):
                    def __init__(self, heads):
                        super().__init__()
                        self.heads = heads
                        self.branches = nn.ModuleList([nn.Identity(), nn.Identity()])

                    def forward(self, q, k, v):
                        h = self.heads
                        q, k, v = map(lambda t: t.reshape(t.shape[0], h, -1), (q, k, v))
                        mixed = sum(map(lambda fn: fn(q), self.branches))
                        return mixed + k * v
            """,
            after="""
                from mindspore import nn


                class Attention(nn.Cell):
                    def __init__(self, heads):
                        super().__init__()
                        self.heads = heads
                        self.branches = nn.CellList([nn.Identity(), nn.Identity()])

                    def construct(self, q, k, v):
                        h = self.heads
                        q, k, v = [t.reshape(t.shape[0], h, -1) for t in (q, k, v)]
                        mixed = sum([fn(q) for fn in self.branches])
                        return mixed + k * v
            """,
            note="Unpacked at once and summed at once: list comprehensions, which a static graph compiles.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._sites: set[int] = set()  # ids of the map(...) calls to rewrite

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if node.name.value not in self._module_classes or not isinstance(node.body, cst.IndentedBlock):
            return
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef):
                self._collect(stmt.body, None)

    def _collect(self, node: cst.CSTNode, parent) -> None:
        if isinstance(node, cst.Call) and self._consumed(node, parent) and _rewritable(node) \
                and not self.scope.lookup("map")[0]:
            self._sites.add(id(node))
        for child in node.children:
            if not isinstance(child, _SCOPES):
                self._collect(child, node)

    @staticmethod
    def _consumed(call: cst.Call, parent) -> bool:
        if isinstance(parent, cst.Assign):
            return parent.value is call and all(isinstance(t.target, (cst.Tuple, cst.List)) for t in parent.targets)
        if isinstance(parent, cst.Arg):
            return True
        return isinstance(parent, cst.For) and parent.iter is call

    def leave_Call(self, original_node, updated_node):
        if id(original_node) not in self._sites:
            return updated_node
        lam = updated_node.args[0].value
        names = [p.name for p in lam.params.params]
        iterables = [a.value for a in updated_node.args[1:]]
        if len(names) == 1:
            target, iterable = names[0], iterables[0]
        else:
            target = cst.Tuple([cst.Element(n) for n in names], lpar=[], rpar=[])
            iterable = cst.Call(func=cst.Name("zip"), args=[cst.Arg(i) for i in iterables])
        self.ctx.converted_sites += 1
        return cst.ListComp(elt=lam.body, for_in=cst.CompFor(target=target, iter=iterable))


def _rewritable(call: cst.Call) -> bool:
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) >= 2) \
            or any(a.keyword is not None or a.star for a in call.args):
        return False
    lam = call.args[0].value
    if not isinstance(lam, cst.Lambda):
        return False
    params = lam.params
    return (len(params.params) == len(call.args) - 1 and not params.posonly_params and not params.kwonly_params
            and not isinstance(params.star_arg, cst.Param) and params.star_kwarg is None
            and all(p.default is None for p in params.params))
