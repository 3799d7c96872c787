"""The converter rule LocalDelTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/local_del.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule


class LocalDelTransform(GraphMethodRule):
    """In a model's methods, ``del`` of local names (``del query, key, value``) is dropped (``pass`` where it was a
    block's only statement).

    Models free large intermediates with ``del`` in ``forward``; MindSpore's static graph (GRAPH_MODE, ``@jit``) has
    no ``del`` statement ("Unsupported statement 'Delete'": batch 6 GMAN, seven of them) and manages a graph's memory
    itself. A program that runs never reads a name after deleting it without binding it again, so the rest of the
    method computes the same; in PyNative the tensors live until the method returns. ``del`` of an attribute or an
    item (``del self.cache``, ``del d[k]``) changes an object and is left as written (lint MS403 names it).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Attention(nn.Module):
                    def forward(self, x):
                        query, key = x * 2, x + 1
                        attention = torch.softmax(query * key, dim=-1)
                        x = attention @ x
                        del query, key, attention
                        if x.shape[0] > 1:
                            del x
                            x = 0
                        return x
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class Attention(nn.Cell):
                    def construct(self, x):
                        query, key = x * 2, x + 1
                        attention = ops.softmax(query * key, axis=-1)
                        x = attention @ x
                        if x.shape[0] > 1:
                            x = 0
                        return x
            """,
            note="The names are bound again before any read, so nothing else changes.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._sole: set[int] = set()  # ids of statement lines that are their block's only statement

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if len(node.body) == 1:
            self._sole.add(id(node.body[0]))

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.compiled or len(original_node.body) != 1 \
                or not isinstance(original_node.body[0], cst.Del) or not _names_only(original_node.body[0].target):
            return updated_node
        self.ctx.converted_sites += 1
        if id(original_node) in self._sole:
            return updated_node.with_changes(body=[cst.Pass()])
        return cst.RemoveFromParent()


def _names_only(target: cst.BaseDelTargetExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_names_only(e.value) for e in target.elements)
    return False
