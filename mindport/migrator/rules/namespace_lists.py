"""The converter rule NamespaceListTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/namespace_lists.md shows both."""
from __future__ import annotations

import collections

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import walk

_ADDERS = ("add_module", "register_module")


class NamespaceListTransform(Rule):
    """``self.path = nn.ModuleList()`` filled only by ``self.path.add_module('pad', ...)`` and read only as
    ``self.path.pad`` becomes ``self.path = nn.Cell()``: a plain Cell holding named children.

    NASNet-style code uses an empty ModuleList as a namespace: children added by name, then called by attribute.
    MindSpore's static graph (GRAPH_MODE, ``@jit``) turns a CellList into a tuple of its cells, so ``self.path.pad``
    fails there ("'Tuple' object has no attribute 'pad'"), and walking it looks members up by position
    ("KeyError: '0'"). A plain Cell has the same children under the same names (so the same parameter names) and
    compiles. Only when the class never uses the list as a list: no indexing, iteration, ``len``, ``append``, and
    every attribute read is a name it added.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Stem(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.path = nn.ModuleList()
                        self.path.add_module('pool', nn.AvgPool2d(1, stride=2))
                        self.path.add_module('conv', nn.Conv2d(4, 4, 1))

                    def forward(self, x):
                        return self.path.conv(self.path.pool(x))
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import layers as mp_nn


                class Stem(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.path = nn.Cell()
                        mp_nn.add_module(self.path, 'pool', nn.AvgPool2d(kernel_size=1, stride=2, pad_mode='valid'))
                        mp_nn.add_module(self.path, 'conv', nn.Conv2d(in_channels=4, out_channels=4, kernel_size=1, has_bias=True, pad_mode='valid'))
                        mp_nn.own_names(self)

                    def construct(self, x):
                        return self.path.conv(self.path.pool(x))
            """,
            note="A ModuleList used as a namespace is a plain Cell with the same named children.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._calls: set[int] = set()  # ids of the nn.ModuleList() calls that become nn.Cell()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        created: dict[str, cst.Call] = {}
        added: dict[str, set[str]] = collections.defaultdict(set)
        other: set[str] = set()  # attributes used some other way
        reads: dict[str, set[str]] = collections.defaultdict(set)
        counted: set[int] = set()
        is_list = self._is_module_list

        def self_attr(expr) -> str | None:
            if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
                return expr.attr.value
            return None

        class Visitor(cst.CSTVisitor):
            def visit_Assign(self, assign: cst.Assign) -> None:
                for target in assign.targets:
                    name = self_attr(target.target)
                    if name is None:
                        continue
                    counted.add(id(target.target))
                    if isinstance(assign.value, cst.Call) and not assign.value.args and is_list(assign.value):
                        if name in created:
                            other.add(name)
                        created[name] = assign.value
                    else:
                        other.add(name)

            def visit_Call(self, call: cst.Call) -> None:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in _ADDERS:
                    name = self_attr(func.value)
                    if name is not None:
                        counted.add(id(func.value))
                        first = call.args[0].value if call.args else None
                        if isinstance(first, cst.SimpleString) and first.evaluated_value.isidentifier():
                            added[name].add(first.evaluated_value)
                        else:
                            other.add(name)

            def visit_Attribute(self, attribute: cst.Attribute) -> None:
                name = self_attr(attribute.value)
                if name is not None:  # self.path.<member>
                    counted.add(id(attribute.value))
                    reads[name].add(attribute.attr.value)
                    return
                name = self_attr(attribute)
                if name is not None and id(attribute) not in counted:
                    other.add(name)  # self.path used whole: indexed, iterated, passed on

        walk(node, Visitor())  # a parent is visited before its children: a use is counted before `self.path` is seen
        for name, call in created.items():
            if name not in other and added[name] and reads[name] <= added[name] | set(_ADDERS):
                self._calls.add(id(call))

    def _is_module_list(self, call: cst.Call) -> bool:
        return self.scope.resolve_torch(call.func) == "torch.nn.ModuleList"

    def leave_Call(self, original_node, updated_node):
        if id(original_node) not in self._calls:
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Call(func=self.ctx.target_expr("mindspore.nn.Cell"), args=[])
