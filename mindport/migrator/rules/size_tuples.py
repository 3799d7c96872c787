"""The converter rule SizeTupleTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/size_tuples.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import walk

_TUPLE_ONLY = frozenset({"numel", "isinstance", "type", "repr", "str", "print", "format"})


class SizeTupleTransform(GraphMethodRule):
    """In a model's methods, ``torch.Size(sizes)`` is ``tuple(sizes)`` when the method reads nothing a tuple lacks:
    no ``numel``, ``isinstance``, ``type``, ``repr``, ``str``, ``print`` or ``format`` anywhere in it.

    Elsewhere ``torch.Size`` is ``mindport.runtime.tensor.Size``, a tuple subclass with ``numel()``. A static graph
    (GRAPH_MODE, ``@jit``) has no tuple subclasses, so inside one the class refuses loudly (ptsemseg's FRRN built
    ``upsample_size = torch.Size([s * 2 for s in y.size()[-2:]])`` for an interpolation's ``size`` and did not
    compile). A ``torch.Size`` equals the tuple of its sizes, indexes, slices, unpacks and adds as one, so when
    nothing in the method asks for more, the tuple is the same program, and compiles.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn
                import torch.nn.functional as F


                class Up(nn.Module):
                    def forward(self, x, y):
                        size = torch.Size([s * 2 for s in y.size()[-2:]])
                        return F.interpolate(x, size=size, mode="nearest")


                class Count(nn.Module):
                    def forward(self, x):
                        return x * torch.Size(x.shape[1:]).numel()
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import tensor as mp_tensor


                class Up(nn.Cell):
                    def construct(self, x, y):
                        size = tuple([s * 2 for s in y.shape[-2:]])
                        return mp_F.interpolate(x, size=size, mode="nearest")


                class Count(nn.Cell):
                    def construct(self, x):
                        return x * mp_tensor.Size(x.shape[1:]).numel()
            """,
            note="A size only passed on is a tuple; one whose numel() is read keeps the runtime class.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._plain: list[bool] = []  # per enclosing function: it reads nothing a tuple lacks

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self._plain.append(self.compiled and not _reads_beyond_tuple(node))

    def leave_FunctionDef(self, original_node, updated_node):
        self._plain.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_Call(self, original_node, updated_node):
        if not self._plain or not self._plain[-1] or len(updated_node.args) != 1 \
                or updated_node.args[0].keyword is not None or updated_node.args[0].star:
            return updated_node
        if self.scope.resolve_torch(original_node.func) != "torch.Size":
            return updated_node
        self.ctx.converted_sites += 1
        return updated_node.with_changes(func=cst.Name("tuple"))


def _reads_beyond_tuple(node: cst.FunctionDef) -> bool:
    """Whether the function names ``numel``, ``isinstance``, ``type``, ``repr``, ``str``, ``print`` or ``format``."""
    hits = []

    class Visitor(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            if name.value in _TUPLE_ONLY:
                hits.append(name)

    walk(node, Visitor())
    return bool(hits)
