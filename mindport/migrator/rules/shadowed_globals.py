"""The converter rule ShadowedGlobalTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/shadowed_globals.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule, forward_methods
from mindport.migrator.walk import walk


class ShadowedGlobalTransform(Rule):
    """In a model's method named like a module-level function or class of the file (lit-llama's
    ``def build_rope_cache(self, idx): return build_rope_cache(seq_len=..., ...)``), the call of the module-level one
    goes through an alias bound right after its definition (``_mp_build_rope_cache = build_rope_cache``).

    MindSpore's static graph (GRAPH_MODE, ``@jit``) resolves a free name equal to the enclosing method's name to the
    method itself, so the call reached the method with the function's arguments ("Got an unexpected keyword argument
    'seq_len'": batch 15's LLaMA and LLaMA-Adapter; measured on a two-line twin). Python resolves it to the module's
    function; the alias names the same object, so PyNative computes the same. Methods of model classes but
    ``__init__``; names bound at the file's top level by ``def`` or ``class`` (an imported torch function is converted
    where it is called, and its import goes).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Model(nn.Module):
                    def __init__(self, n=4):
                        super().__init__()
                        self.n = n

                    def build_cache(self, x):
                        return build_cache(seq_len=self.n, dim=x.shape[-1])

                    def forward(self, x):
                        return x + self.build_cache(x)[: x.shape[0]]


                def build_cache(seq_len, dim):
                    return torch.ones(seq_len, dim)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class Model(nn.Cell):
                    def __init__(self, n=4):
                        super().__init__()
                        self.n = n

                    def build_cache(self, x):
                        return _mp_build_cache(seq_len=self.n, dim=x.shape[-1])

                    def construct(self, x):
                        return x + self.build_cache(x)[: x.shape[0]]


                def build_cache(seq_len, dim):
                    return ops.ones((seq_len, dim))
                _mp_build_cache = build_cache
            """,
            note="The method's own name in its body is the module's function in Python; the alias says so to a graph.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._calls: set[int] = set()  # ids of the Name nodes of the calls to rewrite
        self._names: set[str] = set()  # the module-level names they call
        self._renamed: set[str] = set()  # those whose calls were rewritten (each gets its alias)

    def visit_Module(self, node: cst.Module) -> None:
        top = _top_level_names(node.body)
        for stmt in node.body:
            if not isinstance(stmt, cst.ClassDef) or not isinstance(stmt.body, cst.IndentedBlock):
                continue
            methods = forward_methods(stmt, self._module_classes)
            for method in stmt.body.body:
                if id(method) in methods and method.name.value in top:
                    self._collect(method)

    def _collect(self, method: cst.FunctionDef) -> None:
        name, calls, names = method.name.value, self._calls, self._names

        class Visitor(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                if isinstance(node.func, cst.Name) and node.func.value == name:
                    calls.add(id(node.func))
                    names.add(name)

        walk(method.body, Visitor())

    def leave_Name(self, original_node, updated_node):
        if id(original_node) in self._calls:
            self.ctx.converted_sites += 1
            self._renamed.add(original_node.value)
            return updated_node.with_changes(value=f"_mp_{original_node.value}")
        return updated_node

    def leave_Module(self, original_node, updated_node):
        if not self._renamed:
            return updated_node
        body = []
        for stmt in updated_node.body:
            body.append(stmt)
            for name in sorted(_defined_names(stmt) & self._renamed):
                body.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(f"_mp_{name}"))],
                                                               cst.Name(name))]))
        return updated_node.with_changes(body=body)


def _defined_names(stmt) -> set[str]:
    """Names a top-level statement binds by ``def`` or ``class`` (an imported name may be torch's, which the tables
    convert where it is called: its import goes)."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {stmt.name.value}
    return set()


def _top_level_names(body) -> set[str]:
    found: set[str] = set()
    for stmt in body:
        found |= _defined_names(stmt)
    return found
