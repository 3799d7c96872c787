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
    item (``del self.cache``, ``del d[k]``) changes an object and is left as written (lint MS403 names it), but for
    ``del self.x`` that the same block follows with ``self.x = ...`` (or ``register_buffer("x", ...)``): bound again
    there, so it goes too (fairseq-style positions grown in forward, text-classification-pytorch's Transformer-XL).
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
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Positions(nn.Module):
                    def __init__(self, dim, size=8):
                        super().__init__()
                        self.dim = dim
                        self.size = size
                        self.register_buffer("table", torch.zeros(size, dim))

                    def forward(self, x):
                        if x.shape[1] > self.size:
                            table = torch.zeros(x.shape[1] * 2, self.dim)
                            del self.table
                            self.size = table.shape[0]
                            self.register_buffer("table", table)
                        return x + self.table[: x.shape[1]]
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import framework as mp_framework


                class Positions(nn.Cell):
                    def __init__(self, dim, size=8):
                        super().__init__()
                        self.dim = dim
                        self.size = size
                        self.table = ms.Parameter(ops.zeros((size, dim)), name="table", requires_grad=False)

                    def construct(self, x):
                        _mp_size = self.size
                        # mindport: MP107 construct reads self.size before writing it: PyNative takes the value the previous call left, a static graph (GRAPH_MODE) the value __init__ set
                        if x.shape[1] > _mp_size:
                            table = ops.zeros((x.shape[1] * 2, self.dim))
                            _mp_size = table.shape[0]
                            mp_framework.keep_cache(self, 'size', _mp_size)
                            self.table = ms.Parameter(table, name="table", requires_grad=False)
                        return x + self.table[: x.shape[1]]
            """,
            note="The buffer is bound again in the same block; its del goes, as a local name's does.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._sole: set[int] = set()  # ids of statement lines that are their block's only statement
        self._rebound: set[int] = set()  # ids of ``del self.x`` lines whose block binds ``self.x`` again after them

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if len(node.body) == 1:
            self._sole.add(id(node.body[0]))
        # ``del self.weights`` then, later in the same block, ``self.weights = ...`` (fairseq's sinusoidal positions
        # grown in forward: torch's register_buffer refuses a name still bound, the converted buffer is an
        # assignment): the attribute is bound again, so the del changes nothing a later read sees
        for i, line in enumerate(node.body):
            target = _self_attribute(line)
            if target is not None and any(target == _assigned_self_attribute(later) for later in node.body[i + 1:]):
                self._rebound.add(id(line))

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if id(original_node) in self._rebound and self.compiled:
            self.ctx.converted_sites += 1
            return cst.RemoveFromParent()
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


def _self_attribute(line) -> str | None:
    """``x`` of a line ``del self.x``, else None."""
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Del):
        target = line.body[0].target
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            return target.attr.value
    return None


def _assigned_self_attribute(line) -> str | None:
    """``x`` of a line ``self.x = ...`` (or ``self.register_buffer("x", ...)``, as written before conversion), else
    None."""
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    stmt = line.body[0]
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0].target
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            return target.attr.value
    if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and isinstance(stmt.value.func, cst.Attribute) \
            and stmt.value.func.attr.value == "register_buffer" and stmt.value.args \
            and isinstance(stmt.value.args[0].value, cst.SimpleString):
        return stmt.value.args[0].value.evaluated_value
    return None
