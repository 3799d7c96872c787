"""The converter rule SizeTupleTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/size_tuples.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import walk

_TUPLE_ONLY = frozenset({"numel", "isinstance", "type", "repr", "str", "print", "format"})


class SizeTupleTransform(GraphMethodRule):
    """In a model's methods, ``torch.Size(sizes)`` is ``tuple(sizes)`` when nothing asks more of it than of a tuple:
    bound to a name that is never given to ``isinstance``/``type``/``repr``/``str``/``print``/``format`` and whose
    attributes are never read (``numel()``), or passed straight to another call, indexed, or compared with ``==`` /
    ``!=`` (``assert out.size() == torch.Size([b, n])``: a torch.Size equals the tuple of its sizes).

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
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                class Up(nn.Cell):
                    def construct(self, x, y):
                        size = tuple([s * 2 for s in y.shape[-2:]])
                        return ops.interpolate(x, size=size, mode="nearest")


                class Count(nn.Cell):
                    def construct(self, x):
                        return x * mp_tensor.Size(x.shape[1:]).numel()
            """,
            note="A size only passed on is a tuple; one whose numel() is read keeps the runtime class.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._plain: set[int] = set()  # ids of the torch.Size calls that may be tuples

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self.compiled:
            self._plain |= _plain_sizes(node, lambda call: self.scope.resolve_torch(call.func) == "torch.Size")

    def leave_Call(self, original_node, updated_node):
        if id(original_node) not in self._plain or len(updated_node.args) != 1 \
                or updated_node.args[0].keyword is not None or updated_node.args[0].star:
            return updated_node
        self.ctx.converted_sites += 1
        return updated_node.with_changes(func=cst.Name("tuple"))


def _plain_sizes(node: cst.FunctionDef, is_size) -> set[int]:
    """Ids of the ``torch.Size(...)`` calls of the function whose value nothing asks more of than of a tuple: bound
    to a name (``n = torch.Size(...)``) that is never given to ``isinstance``/``type``/``repr``/``str``/``print``/
    ``format`` and never has an attribute read (``n.numel()``), or passed straight to a call (not one of those),
    indexed, or an operand of ``==`` / ``!=``."""
    beyond: set[str] = set()  # names read as more than a tuple
    bound: dict[str, list] = {}  # name -> the Size calls bound to it
    direct: list = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            blocked = isinstance(call.func, cst.Name) and call.func.value in _TUPLE_ONLY
            for arg in call.args:
                if blocked and isinstance(arg.value, cst.Name):
                    beyond.add(arg.value.value)
                if not blocked and isinstance(arg.value, cst.Call) and is_size(arg.value):
                    direct.append(arg.value)

        def visit_Attribute(self, attr: cst.Attribute) -> None:
            if isinstance(attr.value, cst.Name):
                beyond.add(attr.value.value)

        def visit_Subscript(self, sub: cst.Subscript) -> None:
            if isinstance(sub.value, cst.Call) and is_size(sub.value):
                direct.append(sub.value)

        def visit_Comparison(self, comparison: cst.Comparison) -> None:
            operands = [comparison.left, *(c.comparator for c in comparison.comparisons)]
            if all(isinstance(c.operator, (cst.Equal, cst.NotEqual)) for c in comparison.comparisons):
                direct.extend(o for o in operands if isinstance(o, cst.Call) and is_size(o))

        def visit_Assign(self, assign: cst.Assign) -> None:
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                    and isinstance(assign.value, cst.Call) and is_size(assign.value):
                bound.setdefault(assign.targets[0].target.value, []).append(assign.value)

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node

    walk(node, Visitor())
    plain = {id(call) for call in direct}
    for name, calls in bound.items():
        if name not in beyond:
            plain |= {id(call) for call in calls}
    return plain
