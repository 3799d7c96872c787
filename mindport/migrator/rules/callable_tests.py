"""The converter rule CallableTestTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/callable_tests.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import parse_expression, walk

_RUNTIME = "mindport.runtime.graph_safe"
# the tests of "is this value called" that answer False for every tensor, number, string, None and container
_INSPECT = frozenset(f"inspect.{name}" for name in ("isfunction", "ismethod", "isroutine", "isbuiltin", "isclass",
                                                     "isgeneratorfunction", "iscoroutinefunction"))


class CallableTestTransform(Rule):
    """A test of whether a value is called, guarding a call of it, ``d() if isfunction(d) else d`` or ``if
    callable(f): x = f(x)`` -> ``mp_graph_safe.callable_test(isfunction, d)`` (``callable`` and ``inspect``'s
    ``isfunction``, ``ismethod``, ``isroutine``, ``isbuiltin``, ``isclass``, ``isgeneratorfunction``,
    ``iscoroutinefunction``).

    Models fill unset arguments with ``default(val, d)``: ``return d() if isfunction(d) else d`` (latent-diffusion,
    many others with ``callable``), and call it with a tensor (``context = default(context, x)``). MindSpore's static
    graph (GRAPH_MODE) runs ``isfunction(d)`` and ``callable(d)`` through its JIT Fallback, whose answer is not a
    compile-time constant, so it compiles both branches and ``d()`` on a tensor fails ("The object is not callable":
    latent-diffusion's cross-attention U-Net, measured on 2.10). ``callable_test`` answers False for a tensor, a
    number, a string, None, a tuple, list or dict with ``isinstance``, which a graph decides at compile time (the call
    is then never compiled), and calls the test itself for any other value: in PyNative it is the test. Every
    function is rewritten, not only a model's methods: a graph compiles the module's helpers its methods call. Only a
    test of one name in the test of a conditional expression or an ``if`` whose branches call that name; the test's
    name resolved from the file's imports (a ``callable`` the file binds itself is left).
    """

    EXAMPLES = (
        Example(
            before="""
                from inspect import isfunction

                import torch.nn as nn


                def default(val, d):
                    if val is not None:
                        return val
                    return d() if isfunction(d) else d


                class Block(nn.Module):
                    def __init__(self, act=None):
                        super().__init__()
                        self.act = act

                    def forward(self, x, context=None):
                        context = default(context, x)
                        if callable(self.act):
                            x = self.act(x)
                        return x + context
            """,
            after="""
                from inspect import isfunction

                from mindspore import nn
                from mindport.runtime import graph_safe as mp_graph_safe


                def default(val, d):
                    if val is not None:
                        return val
                    return d() if mp_graph_safe.callable_test(isfunction, d) else d


                class Block(nn.Cell):
                    def __init__(self, act=None):
                        super().__init__()
                        self.act = act

                    def construct(self, x, context=None):
                        context = default(context, x)
                        if callable(self.act):
                            x = self.act(x)
                        return x + context
            """,
            note="The test of a name it then calls is decided at compile time for a tensor; an attribute's test is "
                 "left as written.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime

    def leave_IfExp(self, original_node, updated_node):
        test = self._guarded_test(original_node.test, updated_node.test, (updated_node.body, updated_node.orelse))
        return updated_node if test is None else updated_node.with_changes(test=test)

    def leave_If(self, original_node, updated_node):
        test = self._guarded_test(original_node.test, updated_node.test, (updated_node.body,) + (
            (updated_node.orelse,) if updated_node.orelse is not None else ()))
        return updated_node if test is None else updated_node.with_changes(test=test)

    def _guarded_test(self, original, updated, branches):
        """The rewritten test when it is (``not``) ``P(v)`` of a name ``v`` some branch calls; None otherwise."""
        negated = isinstance(updated, cst.UnaryOperation) and isinstance(updated.operator, cst.Not)
        if negated != (isinstance(original, cst.UnaryOperation) and isinstance(original.operator, cst.Not)):
            return None  # another rule rewrote the test (``type(x) is not T`` -> ``not is_exactly(...)``)
        call, before = (updated.expression, original.expression) if negated else (updated, original)
        if not (isinstance(call, cst.Call) and isinstance(before, cst.Call) and len(call.args) == 1
                and call.args[0].keyword is None and not call.args[0].star
                and isinstance(call.args[0].value, cst.Name) and not call.lpar):
            return None
        qual = self.scope.resolve(before.func)
        if not (qual in _INSPECT or qual is None and isinstance(call.func, cst.Name) and call.func.value == "callable"
                and not self.scope.is_alias_name("callable")):
            return None
        name = call.args[0].value.value
        if not any(_calls(branch, name) for branch in branches):
            return None
        self.runtime_modules.add(_RUNTIME)
        self.ctx.converted_sites += 1
        rewritten = cst.Call(func=parse_expression(f"{runtime_alias(_RUNTIME)}.callable_test"),
                             args=[cst.Arg(call.func, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                                   cst.Arg(call.args[0].value)])
        return updated.with_changes(expression=rewritten) if negated else rewritten


def _calls(node: cst.CSTNode, name: str) -> bool:
    hits = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Name) and call.func.value == name:
                hits.append(call)

    walk(node, Visitor())
    return bool(hits)
