"""The converter rule CommentIndentTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/comment_indent.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule


class CommentIndentTransform(Rule):
    """A comment line inside a function written left of the function's body (``#        print(...)``, commented out
    at column 0) is indented to the body.

    MindSpore's static graph (GRAPH_MODE, ``@jit``) compiles a method from its source lines, dedented as one block: a
    comment left of the ``def`` leaves the block indented and it does not parse ("There are incorrect indentations in
    definition or comment of function: 'BatchNorm.construct'": the normalizing flows of batch 6). Only comments
    inside a function's statements move; the code, strings and comments between functions stay as written.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Scale(nn.Module):
                    def forward(self, x):
                        y = x * 3
                #        print('sum', y.sum().item())
                        return y * 2
            """,
            after="""
                from mindspore import nn


                class Scale(nn.Cell):
                    def construct(self, x):
                        y = x * 3
                        #        print('sum', y.sum().item())
                        return y * 2
            """,
            note="The commented-out line joins the body's indentation; a graph parses the method again.",
        ),
    )

    def leave_FunctionDef(self, original_node, updated_node):
        body = updated_node.body
        if not isinstance(body, cst.IndentedBlock) or not any(_has_left_comment(s) for s in body.body):
            return updated_node
        self.ctx.converted_sites += 1
        return updated_node.with_changes(body=body.with_changes(body=[_indented(s) for s in body.body]))


def _left(line: cst.EmptyLine) -> bool:
    return line.comment is not None and not line.indent


def _parts(node: cst.CSTNode) -> list:
    """The parts of a compound statement that hold statements: its indented blocks and its else/elif/except/finally
    clauses."""
    parts = []
    for name in ("body", "orelse", "handlers", "finalbody"):
        value = getattr(node, name, None)
        parts.extend(value if isinstance(value, (list, tuple)) and name == "handlers" else
                     [value] if isinstance(value, (cst.IndentedBlock, cst.Else, cst.Finally, cst.If)) else [])
    return parts


def _has_left_comment(node: cst.CSTNode) -> bool:
    if any(_left(line) for line in getattr(node, "leading_lines", ())):
        return True
    for part in _parts(node):
        if isinstance(part, cst.IndentedBlock):
            if any(_left(line) for line in part.footer) or any(_has_left_comment(s) for s in part.body):
                return True
        elif _has_left_comment(part):
            return True
    return False


def _indented(node: cst.CSTNode) -> cst.CSTNode:
    """The node with its comment lines, and those of the statements it holds, indented to their block."""
    def lines(found):
        return [line.with_changes(indent=True) if _left(line) else line for line in found]

    changes = {}
    if hasattr(node, "leading_lines"):
        changes["leading_lines"] = lines(node.leading_lines)
    for name in ("body", "orelse", "handlers", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, cst.IndentedBlock):
            changes[name] = value.with_changes(body=[_indented(s) for s in value.body], footer=lines(value.footer))
        elif isinstance(value, (cst.Else, cst.Finally, cst.If)):
            changes[name] = _indented(value)
        elif name == "handlers" and value:
            changes[name] = [_indented(h) for h in value]
    return node.with_changes(**changes) if changes else node
