"""The converter rule JitMarkerTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/jit_markers.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import decorator_func, target_names
from mindport.migrator.walk import walk

# TorchScript's markers: torch runs the function itself in eager mode, so MindSpore code is the function itself
_DECORATORS = frozenset({"torch.jit.script", "torch.jit.ignore", "torch.jit.unused", "torch.jit.export",
                         "torch.jit.script_method", "torch.jit.script_if_tracing"})
# TorchScript's queries: False in eager torch, the only torch a converted program stands for
_QUERIES = frozenset({"torch.jit.is_scripting", "torch.jit.is_tracing",
                      "torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling",
                      "torch._dynamo.is_compiling", "torch.onnx.is_in_onnx_export"})
_FALSE, _TRUE = "False", "True"


class JitMarkerTransform(Rule):
    """TorchScript's markers and queries, folded away when the file is converted.

    A converted program runs as torch's eager mode does: ``@torch.jit.script``, ``@torch.jit.ignore`` (bare or
    called), ``@torch.jit.unused``, ``@torch.jit.export`` and ``@torch.jit.script_method`` mark a function for the
    TorchScript compiler and leave it as it is in eager torch, so the decorator goes; ``torch.jit.script(f)`` called
    on a function is ``f``. ``torch.jit.is_scripting()``, ``torch.jit.is_tracing()`` (and ``torch.compiler.
    is_compiling()``, ``torch.onnx.is_in_onnx_export()``) are False in eager torch: the call becomes ``False`` and a
    test made of such calls with ``not``/``and``/``or`` is folded, so an ``if`` keeps the branch eager torch runs and
    the other is dropped (an ``elif`` test is only replaced). No ``mindport.runtime`` import is left for them, and a
    static graph has nothing of TorchScript's to compile.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Gate(nn.Module):
                    @torch.jit.ignore
                    def no_weight_decay(self):
                        return {"scale"}

                    @torch.jit.ignore(drop=True)
                    def scaled(self, x):
                        return x * 2

                    def forward(self, x):
                        if torch.jit.is_scripting():
                            return x
                        else:
                            x = self.scaled(x)
                        if not torch.jit.is_tracing() and x.shape[0] > 1:
                            x = x + 1
                        return x


                @torch.jit.script
                def halve(x):
                    return x / 2
            """,
            after="""
                from mindspore import nn


                class Gate(nn.Cell):
                    def no_weight_decay(self):
                        return {"scale"}

                    def scaled(self, x):
                        return x * 2

                    def construct(self, x):
                        x = self.scaled(x)
                        if x.shape[0] > 1:
                            x = x + 1
                        return x


                def halve(x):
                    return x / 2
            """,
            note="Decorators for the TorchScript compiler go; is_scripting()/is_tracing() are False in eager torch, "
                 "so each if keeps the branch eager torch runs.",
        ),
        Example(
            before="""
                import math

                import torch


                def act(x):
                    return x * math.pi


                fast_act = torch.jit.script(act)
                exporting = torch.onnx.is_in_onnx_export()
            """,
            after="""
                import math


                def act(x):
                    return x * math.pi


                fast_act = act
                exporting = False
            """,
            note="torch.jit.script(f) on a function is f; a query outside a test is the constant False.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._elifs: set[int] = set()
        self._functions: set[str] = set()

    def _qual(self, node) -> str | None:
        return self.scope.resolve_torch(node)

    def _is_query(self, node) -> bool:
        return isinstance(node, cst.Call) and not node.args and self._qual(node.func) in _QUERIES

    def _decorator_qual(self, decorator: cst.Decorator) -> str | None:
        return self._qual(decorator_func(decorator))

    def visit_Module(self, node: cst.Module) -> None:
        # names bound by a ``def`` and nothing else: torch.jit.script(f) is f (a module given to it becomes a
        # ScriptModule, whose methods differ from the Cell's: left to the mapping table)
        defined, assigned = set(), set()

        class _Names(cst.CSTVisitor):
            def visit_FunctionDef(self, node):
                defined.add(node.name.value)

            def visit_AssignTarget(self, node):
                assigned.update(target_names(node.target))

            def visit_ClassDef(self, node):
                assigned.add(node.name.value)

        walk(node, _Names())
        self._functions = defined - assigned

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if self._decorator_qual(node) in _DECORATORS:
            self.ctx.handled.add(id(node.decorator))  # the whole decorator goes: no other rule maps its call
            if isinstance(node.decorator, cst.Call):
                self.ctx.handled.add(id(node.decorator.func))

    def leave_Decorator(self, original_node, updated_node):
        if self._decorator_qual(original_node) not in _DECORATORS:
            return updated_node
        self.ctx.converted_sites += 1
        return cst.RemovalSentinel.REMOVE

    def leave_Call(self, original_node, updated_node):
        if id(original_node) in self.ctx.handled:
            return updated_node
        if self._is_query(original_node):
            self.ctx.converted_sites += 1
            return cst.Name(_FALSE)
        if self._qual(original_node.func) in ("torch.jit.script", "torch.jit.ignore", "torch.jit.unused",
                                              "torch.jit.export") \
                and len(original_node.args) == 1 and original_node.args[0].keyword is None \
                and original_node.args[0].star == "" and isinstance(original_node.args[0].value, cst.Name) \
                and original_node.args[0].value.value in self._functions:
            self.ctx.converted_sites += 1
            return updated_node.args[0].value
        return updated_node

    def _has_query(self, test) -> bool:
        found = []

        class _Find(cst.CSTVisitor):
            def visit_Call(inner, node):  # noqa: N805 - the rule is the outer self
                if self._is_query(node):
                    found.append(node)

        walk(test, _Find())
        return bool(found)

    def leave_IfExp(self, original_node, updated_node):
        if not self._has_query(original_node.test):
            return updated_node
        value = _fold(updated_node.test)
        if value == _TRUE:
            return updated_node.body
        if value == _FALSE:
            return updated_node.orelse
        return updated_node.with_changes(test=value)

    def leave_If(self, original_node, updated_node):
        if not self._has_query(original_node.test):
            return updated_node
        value = _fold(updated_node.test)
        if id(original_node) in self._elifs or value not in (_TRUE, _FALSE):
            if isinstance(value, str):
                value = cst.Name(value)
            return updated_node.with_changes(test=value)
        if value == _TRUE:
            kept = list(updated_node.body.body)
        elif isinstance(updated_node.orelse, cst.Else):
            kept = list(updated_node.orelse.body.body)
        elif isinstance(updated_node.orelse, cst.If):  # the elif becomes the if
            kept = [updated_node.orelse]
        else:
            kept = []
        if not kept:
            return cst.RemovalSentinel.REMOVE
        first = kept[0]
        if hasattr(first, "leading_lines"):
            kept[0] = first.with_changes(leading_lines=[*updated_node.leading_lines, *first.leading_lines])
        return cst.FlattenSentinel(kept)

    def leave_IndentedBlock(self, original_node, updated_node):
        if updated_node.body or not original_node.body:
            return updated_node
        return updated_node.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])


def _fold(test):
    """A test with the queries already False: ``_TRUE``/``_FALSE`` when it is constant, else the expression with its
    constant parts dropped."""
    if isinstance(test, cst.Name) and test.value in (_TRUE, _FALSE):
        return test.value
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _fold(test.expression)
        if inner in (_TRUE, _FALSE):
            return _FALSE if inner == _TRUE else _TRUE
        return test.with_changes(expression=inner)
    if isinstance(test, cst.BooleanOperation):
        left, right = _fold(test.left), _fold(test.right)
        is_and = isinstance(test.operator, cst.And)
        absorbing, neutral = (_FALSE, _TRUE) if is_and else (_TRUE, _FALSE)
        if left == absorbing:
            return absorbing  # the right side is never evaluated
        if left == neutral:
            return right
        if right == neutral:
            return left
        if right == absorbing:  # the left side runs for its effects, then the constant: keep it written
            return test.with_changes(left=left, right=cst.Name(absorbing))
        return test.with_changes(left=left, right=right)
    return test

