"""The converter rule LoopElseTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/loop_else.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import read

_FLAG = "_mp_no_break"


class LoopElseTransform(GraphMethodRule):
    """In a model's methods, a ``for``/``while`` loop with an ``else`` clause becomes a flag: ``_mp_no_break = True``
    before the loop, ``_mp_no_break = False`` before each ``break`` of that loop (not of a loop nested in it), and
    the ``else`` body under ``if _mp_no_break:`` after the loop. A loop with no ``break`` of its own runs its ``else``
    body always, so the body simply follows the loop.

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) refuses both forms: "The 'for...else...' statement is not
    supported now" (batch 13 CondenseNet's ``LearnedGroupConv._check_drop``, which ``forward`` calls: ``for i in
    range(...): if ...: stage = i; break`` / ``else: stage = condense_factor - 1``), and the same for
    ``while...else``. Python runs the ``else`` body exactly when the loop ends without ``break``; the flag is False
    exactly when a ``break`` of the loop ran, so both forms compute the same in PyNative and in a graph. A ``return``
    or an exception leaves the method, so it skips both. A loop with an ``else`` nested in another gets its own flag
    (``_mp_no_break_1``, ...). ``async for`` is left as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Stages(nn.Module):
                    def __init__(self, stages):
                        super().__init__()
                        self.stages = stages

                    def forward(self, x, progress):
                        stage = None
                        for i in range(self.stages - 1):
                            if progress * 2 < (i + 1) / (self.stages - 1):
                                stage = i
                                break
                        else:
                            stage = self.stages - 1
                        return x * stage
            """,
            after="""
                from mindspore import nn


                class Stages(nn.Cell):
                    def __init__(self, stages):
                        super().__init__()
                        self.stages = stages

                    def construct(self, x, progress):
                        stage = None
                        _mp_no_break = True
                        for i in range(self.stages - 1):
                            if progress * 2 < (i + 1) / (self.stages - 1):
                                stage = i
                                _mp_no_break = False
                                break
                        if _mp_no_break:
                            stage = self.stages - 1
                        return x * stage
            """,
            note="The else body runs when no break of the loop ran, as Python's for...else.",
        ),
        Example(
            before="""
                import torch.nn as nn


                class Halve(nn.Module):
                    def forward(self, x):
                        n = 0
                        while n < 3:
                            n += 1
                            for j in range(2):
                                if j > n:
                                    break
                        else:
                            x = x / 2
                        return x + n
            """,
            after="""
                from mindspore import nn


                class Halve(nn.Cell):
                    def construct(self, x):
                        n = 0
                        while n < 3:
                            n += 1
                            for j in range(2):
                                if j > n:
                                    break
                        x = x / 2
                        return x + n
            """,
            note="The break belongs to the inner loop, so the while loop's else body always runs: it follows the loop.",
        ),
    )

    def leave_IndentedBlock(self, original_node, updated_node):
        # at the block, not at the loop: an earlier rule may rewrite the loop statement itself (BranchBindingTransform
        # binds ``stage = None`` before it), and a block is closed by every rule, on its statements as rewritten
        if not self.compiled or not any(isinstance(s, (cst.For, cst.While)) and s.orelse is not None
                                        for s in updated_node.body):
            return updated_node
        body = []
        for statement in updated_node.body:
            if isinstance(statement, (cst.For, cst.While)) and statement.orelse is not None \
                    and not getattr(statement, "asynchronous", None):
                body.extend(self._rewrite(statement))
            else:
                body.append(statement)
        return updated_node.with_changes(body=body)

    def _rewrite(self, loop) -> list:
        flag = _free_flag(loop.body)
        marker = _BreakFlagger(flag)
        body = loop.body.visit(marker)
        else_body = _statements(loop.orelse.body)
        bare = loop.with_changes(body=body, orelse=None, leading_lines=())
        self.ctx.converted_sites += 1
        if not marker.found:
            return [bare.with_changes(leading_lines=loop.leading_lines), *else_body]
        start = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(flag))], value=cst.Name("True"))],
            leading_lines=loop.leading_lines)
        return [start, bare, cst.If(test=cst.Name(flag), body=cst.IndentedBlock(body=else_body))]


def _free_flag(body) -> str:
    """``_mp_no_break``, or ``_mp_no_break_<n>`` when a loop nested in ``body`` already uses that name."""
    used = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value.startswith(_FLAG):
                used.add(node.value)

    read(body, Names())
    flag, n = _FLAG, 0
    while flag in used:
        n += 1
        flag = f"{_FLAG}_{n}"
    return flag


def _statements(block) -> list:
    """The statements of an ``else`` block, as statement lines (``else: x = 1`` gives one line)."""
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    return [cst.SimpleStatementLine(body=list(block.body))]  # a SimpleStatementSuite


class _BreakFlagger(cst.CSTTransformer):
    """Puts ``flag = False`` before each ``break`` of the loop whose body it visits (not inside nested loops,
    functions, classes or lambdas)."""

    def __init__(self, flag: str) -> None:
        super().__init__()
        self.flag = flag
        self.found = False

    def visit_For(self, node) -> bool:
        return False

    def visit_While(self, node) -> bool:
        return False

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def _flag_breaks(self, updated_node):
        if not any(isinstance(s, cst.Break) for s in updated_node.body):
            return updated_node
        self.found = True
        body = []
        for small in updated_node.body:
            if isinstance(small, cst.Break):
                body.append(cst.Assign(targets=[cst.AssignTarget(cst.Name(self.flag))], value=cst.Name("False")))
            body.append(small)
        return updated_node.with_changes(body=body)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Break):
            self.found = True
            flag = cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(self.flag))], value=cst.Name("False"))],
                leading_lines=updated_node.leading_lines)
            return cst.FlattenSentinel([flag, updated_node.with_changes(leading_lines=())])
        return self._flag_breaks(updated_node)

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        return self._flag_breaks(updated_node)
