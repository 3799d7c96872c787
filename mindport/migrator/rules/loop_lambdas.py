"""The converter rule LoopLambdaTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/loop_lambdas.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import all_nodes
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import read, replace_nodes

_NAME = "_mp_loop_fn"


class LoopLambdaTransform(GraphMethodRule):
    """In a model's methods, a lambda created inside the body of a ``for`` loop becomes a nested function: ``f =
    lambda t, k: t * k`` is ``def f(t, k): return t * k`` where it stood, and a lambda written inside an expression
    (``x = (lambda t, h: ops.reshape(t, (h, -1)))(x, 2)``, the form the converter gives an einops pattern whose
    keyword holds a call) is ``def _mp_loop_fn(t, h): return ops.reshape(t, (h, -1))`` on the line before, the
    expression calling ``_mp_loop_fn``.

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) compiles a lambda created in a ``for`` loop's body to a
    method that returns None, whatever follows it: ``for i in range(2): y = (lambda t: t * 2)(x); out = out + y``,
    then ``return out``, gives None, with no error (measured; the same lambda before the loop, in a ``while`` loop or
    written as a ``def`` inside the loop compiles right). A ``def`` with the lambda's parameters (defaults included)
    and ``return`` of its body is the same function, created at the same point of each iteration, reading the same
    names; so both forms compute the same in PyNative. A lambda inside a comprehension (it may read the
    comprehension's variable), in another lambda or in a compound statement's header is left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Refine(nn.Module):
                    def __init__(self, steps):
                        super().__init__()
                        self.proj = nn.Linear(4, 4)
                        self.steps = steps

                    def forward(self, x):
                        for _ in range(self.steps):
                            mix = lambda t, k=0.5: t * k
                            x = self.proj(mix(x)) + (lambda t: t * t)(x)
                        return x
            """,
            after="""
                from mindspore import nn


                class Refine(nn.Cell):
                    def __init__(self, steps):
                        super().__init__()
                        self.proj = nn.Dense(in_channels=4, out_channels=4)
                        self.steps = steps

                    def construct(self, x):
                        for _ in range(self.steps):
                            def mix(t, k=0.5):
                                return t * k
                            def _mp_loop_fn(t):
                                return t * t
                            x = self.proj(mix(x)) + _mp_loop_fn(x)
                        return x
            """,
            note="A lambda bound to a name is a def of that name; one inside an expression is a def on the line "
                 "before.",
        ),
    )

    def __init__(self, ctx, module_classes) -> None:
        super().__init__(ctx, module_classes)
        self._count = 0

    def leave_IndentedBlock(self, original_node, updated_node):
        # at the block (chained: every rule's rewrite of the loop is in), the loops it holds directly; a nested loop's
        # body was rewritten when its own block was left
        if not self.compiled or not any(isinstance(s, cst.For) for s in updated_node.body):
            return updated_node
        body = []
        for statement in updated_node.body:
            if isinstance(statement, cst.For) and all_nodes(statement.body, cst.Lambda):
                statement = statement.with_changes(body=statement.body.visit(_LambdaDefs(self)))
            body.append(statement)
        return updated_node.with_changes(body=body)

    def fresh_name(self, taken: set[str]) -> str:
        while True:
            name = _NAME if self._count == 0 else f"{_NAME}_{self._count}"
            self._count += 1
            if name not in taken:
                return name


def _as_def(name: str, fn: cst.Lambda, line) -> cst.FunctionDef:
    return cst.FunctionDef(name=cst.Name(name), params=fn.params,
                           body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(value=fn.body)])]),
                           leading_lines=line.leading_lines if line is not None else ())


class _LambdaDefs(cst.CSTTransformer):
    """The loop body's statement lines with their outermost lambdas (not in a comprehension, a nested function or
    class) as nested defs."""

    def __init__(self, rule: LoopLambdaTransform) -> None:
        super().__init__()
        self.rule = rule

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_SimpleStatementLine(self, node) -> bool:
        return False  # rewritten whole in leave_SimpleStatementLine

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Assign) \
                and len(updated_node.body[0].targets) == 1 \
                and isinstance(updated_node.body[0].targets[0].target, cst.Name) \
                and isinstance(updated_node.body[0].value, cst.Lambda):
            assign = updated_node.body[0]
            self.rule.ctx.converted_sites += 1
            return _as_def(assign.targets[0].target.value, assign.value, updated_node)
        lambdas: list[cst.Lambda] = []

        class Outer(cst.CSTVisitor):
            def visit_Lambda(self, node) -> bool:
                lambdas.append(node)
                return False

            def visit_ListComp(self, node) -> bool:
                return False

            visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

        read(updated_node, Outer())
        if not lambdas:
            return updated_node
        taken = {n.value for n in all_nodes(updated_node, cst.Name)}
        defs, names = [], {}
        for fn in lambdas:
            name = self.rule.fresh_name(taken)
            taken.add(name)
            names[id(fn)] = cst.Name(name)
            defs.append(_as_def(name, fn, None))
        line = replace_nodes(updated_node, names)
        defs[0] = defs[0].with_changes(leading_lines=updated_node.leading_lines)
        self.rule.ctx.converted_sites += len(defs)
        return cst.FlattenSentinel([*defs, line.with_changes(leading_lines=())])

