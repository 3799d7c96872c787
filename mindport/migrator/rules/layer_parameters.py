"""The converter rule LayerParameterNameTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/layer_parameters.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule


class LayerParameterNameTransform(Rule):
    """``self.emb.weight`` -> ``self.emb.embedding_table`` when ``self.emb`` holds a torch layer whose weight rule
    renames the parameter (Embedding, BatchNorm, LayerNorm, PReLU …): tied weights
    (``self.head.weight = self.emb.weight``) and direct parameter use keep working after conversion."""

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class LM(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.emb = nn.Embedding(100, 16)
                        self.head = nn.Linear(16, 100, bias=False)
                        self.head.weight = self.emb.weight
            """,
            after="""
                import mindspore as ms
                from mindspore import nn


                class LM(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.emb = nn.Embedding(vocab_size=100, embedding_size=16, embedding_table=ms.common.initializer.Normal(sigma=1.0))
                        self.head = nn.Dense(in_channels=16, out_channels=100, has_bias=False)
                        self.head.weight = self.emb.embedding_table
            """,
            note="Tied weights: an Embedding's weight is embedding_table in MindSpore.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: list[dict[str, dict[str, str]]] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(self._layer_attributes(node))

    def leave_ClassDef(self, original_node, updated_node):
        self._classes.pop()
        return updated_node

    def _layer_attributes(self, node: cst.ClassDef) -> dict[str, dict[str, str]]:
        """``self.X = <torch layer>(...)`` anywhere in the class -> {X: {torch leaf: MindSpore leaf}} (renames only).
        Walks statements only (never into expressions): an assignment is a statement."""
        renames: dict[str, dict[str, str]] = {}
        for assign in _assignments(node.body):
            if len(assign.targets) != 1 or not isinstance(assign.value, cst.Call):
                continue
            target = assign.targets[0].target
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == "self"):
                continue
            qual = self.scope.resolve_torch(assign.value.func)
            entry = self.ctx.registry.lookup(qual) if qual else None
            if entry is not None and entry.kind == "layer":
                leaves = {k: v for k, v in entry.weights.items() if v and v != k and "." not in v}
                if leaves:
                    renames[target.attr.value] = leaves
        return renames

    def leave_Attribute(self, original_node, updated_node):
        if not self._classes or not self._classes[-1]:
            return updated_node
        owner = original_node.value
        if isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value == "self":
            leaf = self._classes[-1].get(owner.attr.value, {}).get(original_node.attr.value)
            if leaf:
                self.ctx.converted_sites += 1
                return updated_node.with_changes(attr=cst.Name(leaf))
        return updated_node


def _assignments(block):
    """Every ``Assign`` statement in a block, nested blocks included (statements only, no expressions)."""
    body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    for stmt in body:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from (small for small in stmt.body if isinstance(small, cst.Assign))
        elif isinstance(stmt, cst.Assign):
            yield stmt
        else:
            for part in ("body", "orelse", "finalbody"):
                child = getattr(stmt, part, None)
                while isinstance(child, (cst.If, cst.Else)):  # elif chains
                    yield from _assignments(child.body)
                    child = getattr(child, "orelse", None)
                if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                    yield from _assignments(child)
                elif child is not None and hasattr(child, "body"):
                    yield from _assignments(child.body)
            for handler in getattr(stmt, "handlers", ()):
                yield from _assignments(handler.body)
            for case in getattr(stmt, "cases", ()):
                yield from _assignments(case.body)
