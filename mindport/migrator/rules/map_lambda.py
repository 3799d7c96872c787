"""The converter rule MapLambdaTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/map_lambda.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule

class MapLambdaTransform(Rule):
    """``map(lambda t: ..., items)`` (or ``map(fn, items)``) consumed where it stands becomes the list comprehension
    ``[... for t in items]``.

    ``q, k, v = map(lambda t: rearrange(t, ...), (q, k, v))`` and ``sum(map(lambda fn: fn(x), self.fns))`` are common
    in model code. MindSpore's static graph (GRAPH_MODE, ``@jit``) refuses a lambda that reads a name of the method
    (``The Map operator don't support Closure with free variable yet``); a list comprehension compiles, and gives the
    same values where the result is used at once: unpacked by an assignment, passed to a call, or looped over. Several
    iterables (``map(lambda a, b: a + b, xs, ys)``) are zipped; a named function is called on ``_mp_item``, and
    ``functools.partial(f, *args, **kw)`` whose arguments call nothing is written out as ``f(*args, _mp_item,
    **kw)`` (denoising-diffusion-pytorch's ``k, v = map(partial(torch.cat, dim=-1), ((mk, k), (mv, v)))``: a graph's
    ``map`` handed the pairs' items to ``cat`` one by one, "tensors's type 'Tuple[Int64*2]'"). Helper
    functions are compiled too when a model calls them, so the rule applies to every function. A lambda with defaults
    or ``*args``, a ``map`` bound to something else, and a map kept for later (``it = map(...)``, ``return
    map(...)``) are left as written.
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
        Example(
            before="""
                from functools import partial

                import torch.nn as nn


                def scaled(s, x, b=0.0):
                    return x * s + b


                class Mix(nn.Module):
                    def forward(self, k, v):
                        k, v = map(partial(scaled, 2.0, b=1.0), (k, v))
                        return k * v
            """,
            after="""
                from functools import partial

                from mindspore import nn


                def scaled(s, x, b=0.0):
                    return x * s + b


                class Mix(nn.Cell):
                    def construct(self, k, v):
                        k, v = [scaled(2.0, _mp_item, b=1.0) for _mp_item in (k, v)]
                        return k * v
            """,
            note="A partial mapped: its function called with the partial's arguments around each item.",
        ),
    )

    # rewritten where the result is consumed: the parent node's hook sees the map call as its value
    def leave_Arg(self, original_node, updated_node):
        return self._rewrite(updated_node, "value")

    def leave_For(self, original_node, updated_node):
        return self._rewrite(updated_node, "iter")

    def leave_Assign(self, original_node, updated_node):
        if all(isinstance(t.target, (cst.Tuple, cst.List)) for t in updated_node.targets):
            return self._rewrite(updated_node, "value")
        return updated_node

    def _rewrite(self, parent, field: str):
        call = getattr(parent, field)
        if not isinstance(call, cst.Call) or not _rewritable(call) or self.scope.lookup("map")[0]:
            return parent
        func = call.args[0].value
        iterables = [a.value for a in call.args[1:]]
        if isinstance(func, cst.Lambda):
            names, body = [p.name for p in func.params.params], func.body
        elif isinstance(func, cst.Call):  # map(partial(f, *a, **kw), xs): f(*a, item, **kw)
            if not self._inlined_partial(func):
                return parent
            names = [cst.Name("_mp_item" + (str(i) if i else "")) for i in range(len(iterables))]
            given = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in func.args[1:]]
            body = cst.Call(func=func.args[0].value, args=[*(a for a in given if a.keyword is None),
                                                           *(cst.Arg(n) for n in names),
                                                           *(a for a in given if a.keyword is not None)])
        else:
            names = [cst.Name("_mp_item" + (str(i) if i else "")) for i in range(len(iterables))]
            body = cst.Call(func=func, args=[cst.Arg(n) for n in names])
        if len(names) == 1:
            target, iterable = names[0], iterables[0]
        else:
            target = cst.Tuple([cst.Element(n) for n in names], lpar=[], rpar=[])
            iterable = cst.Call(func=cst.Name("zip"), args=[cst.Arg(i) for i in iterables])
        self.ctx.converted_sites += 1
        return parent.with_changes(**{field: cst.ListComp(elt=body, for_in=cst.CompFor(target=target, iter=iterable))})

    def _inlined_partial(self, call: cst.Call) -> bool:
        """``partial(f, ...)`` of functools, with a named function and arguments that call nothing (evaluated once by
        the partial, once per item written out: the same values)."""
        if not call.args or self.scope.resolve(call.func) != "functools.partial" \
                or not isinstance(call.args[0].value, (cst.Name, cst.Attribute)):
            return False
        return all(not a.star and not _calls(a.value) for a in call.args)


def _calls(node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.Call, cst.Lambda, cst.Await, cst.Yield, cst.NamedExpr)):
        return True
    return any(_calls(child) for child in node.children)


def _rewritable(call: cst.Call) -> bool:
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) >= 2) \
            or any(a.keyword is not None or a.star for a in call.args):
        return False
    lam = call.args[0].value
    if isinstance(lam, (cst.Name, cst.Attribute, cst.Call)):
        return True  # map(fn, xs): fn(item) for each item; a partial(...) is checked by the rule (its scope)
    if not isinstance(lam, cst.Lambda):
        return False
    params = lam.params
    return (len(params.params) == len(call.args) - 1 and not params.posonly_params and not params.kwonly_params
            and not isinstance(params.star_arg, cst.Param) and params.star_kwarg is None
            and all(p.default is None for p in params.params))
