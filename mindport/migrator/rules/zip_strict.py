"""The converter rule ZipStrictTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/zip_strict.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.native_facts import own_nodes
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import self_attribute_name
from mindport.migrator.walk import parse_expression

_RUNTIME = "mindport.runtime.graph_safe"


class ZipStrictTransform(GraphMethodRule):
    """In a model's methods, ``zip(a, b, strict=False)`` -> ``zip(a, b)`` and ``zip(a, b, strict=True)`` ->
    ``mp_graph_safe.zip_strict(a, b)``.

    Python 3.10's ``strict`` keyword (linters ask for it: ruff B905) reaches ``forward``: wolny/pytorch-3dunet's
    ``AbstractUNet.forward`` walks ``zip(self.decoders, encoders_features, strict=False)``. MindSpore's static graph
    (GRAPH_MODE) has a ``zip`` without the keyword and stops ("Got an unexpected keyword argument 'strict'",
    MindSpore 2.10). ``strict=False`` is ``zip``'s default, so it is dropped; ``strict=True`` becomes the runtime's
    ``zip_strict``, Python's own ``zip(..., strict=True)`` in PyNative and, in a graph, the same length check on
    sequences whose lengths are known there. A ``strict`` that is not a literal is left as written.

    A ParameterList the class holds, zipped in such a method (stgcn's ``zip(self.st_gcn_networks,
    self.edge_importance)``), is given as ``tuple(self.<name>)``: MindSpore 2.10's graph compiles ``for w in
    self.imp`` and ``self.imp[i]`` but not the list inside ``zip`` ("Unsupported element type[unknown] to set element
    data type for KernelTensor"); the tuple holds the same Parameters in the same order.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Decoder(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

                    def forward(self, x, skips):
                        for block, skip in zip(self.blocks, skips, strict=False):
                            x = block(x) + skip
                        for block, skip in zip(self.blocks, skips, strict=True):
                            x = block(x) * skip
                        return x


                def pairs(a, b):
                    return list(zip(a, b, strict=True))
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import graph_safe as mp_graph_safe


                class Decoder(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.blocks = nn.CellList([nn.Dense(in_channels=4, out_channels=4), nn.Dense(in_channels=4, out_channels=4)])

                    def construct(self, x, skips):
                        for block, skip in zip(self.blocks, skips):
                            x = block(x) + skip
                        for block, skip in mp_graph_safe.zip_strict(self.blocks, skips):
                            x = block(x) * skip
                        return x


                def pairs(a, b):
                    return list(zip(a, b, strict=True))
            """,
            note="The default is dropped, the length check kept; a function outside a model runs as Python does.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Weighted(nn.Module):
                    def __init__(self, n=3):
                        super().__init__()
                        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])
                        self.imp = nn.ParameterList([nn.Parameter(torch.ones(4)) for _ in range(n)])

                    def forward(self, x):
                        for blk, w in zip(self.blocks, self.imp):
                            x = blk(x) * w
                        return x
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import containers as mp_containers


                class Weighted(nn.Cell):
                    def __init__(self, n=3):
                        super().__init__()
                        self.blocks = nn.CellList([nn.Dense(in_channels=4, out_channels=4) for _ in range(n)])
                        self.imp = mp_containers.ParameterList([ms.Parameter(ops.ones(4)) for _ in range(n)])

                    def construct(self, x):
                        for blk, w in zip(self.blocks, tuple(self.imp)):
                            x = blk(x) * w
                        return x
            """,
            note="A ParameterList zipped in a model's method is its tuple (GRAPH_MODE compiles no list in zip).",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        lists = set()
        if isinstance(node.body, cst.IndentedBlock):
            for method in node.body.body:
                if not (isinstance(method, cst.FunctionDef) and method.name.value == "__init__"):
                    continue
                for stmt in own_nodes(method, cst.Assign):  # under an if too (stgcn's edge_importance_weighting)
                    if len(stmt.targets) == 1 and isinstance(stmt.value, cst.Call) \
                            and self.scope.resolve_torch(stmt.value.func) == "torch.nn.ParameterList" \
                            and self_attribute_name(stmt.targets[0].target) is not None:
                        lists.add(self_attribute_name(stmt.targets[0].target))
        self._parameter_lists = getattr(self, "_parameter_lists", []) + [lists]

    def leave_ClassDef(self, original_node, updated_node):
        self._parameter_lists.pop()
        return updated_node

    def leave_Call(self, original_node, updated_node):
        if not (self.compiled and isinstance(original_node.func, cst.Name) and original_node.func.value == "zip"
                and self.scope.resolve(original_node.func) is None):
            return updated_node
        lists = self._parameter_lists[-1] if getattr(self, "_parameter_lists", None) else set()
        if any(a.keyword is None and not a.star and self_attribute_name(a.value) in lists for a in updated_node.args):
            self.ctx.converted_sites += 1
            updated_node = updated_node.with_changes(args=[
                a.with_changes(value=cst.Call(cst.Name("tuple"), [cst.Arg(a.value)]))
                if a.keyword is None and not a.star and self_attribute_name(a.value) in lists else a
                for a in updated_node.args])
        strict = [a for a in updated_node.args if a.keyword is not None and a.keyword.value == "strict"]
        if len(strict) != 1 or not (isinstance(strict[0].value, cst.Name)
                                    and strict[0].value.value in ("True", "False")):
            return updated_node
        args = [a for a in updated_node.args if a is not strict[0]]
        if not args:
            return updated_node
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.ctx.converted_sites += 1
        if strict[0].value.value == "False":
            return updated_node.with_changes(args=args)
        self.runtime_modules.add(_RUNTIME)
        return updated_node.with_changes(func=parse_expression(f"{runtime_alias(_RUNTIME)}.zip_strict"), args=args)
