"""The converter rule ListSortTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/list_sort.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example
from mindport.migrator.rules.list_pop import OwnListRule
from mindport.migrator.walk import parse_statement, walk

_TEMP = "_mp_at"
_SORT_KEYWORDS = frozenset({"key", "reverse"})


class ListSortTransform(OwnListRule):
    """In a model's methods, ``xs.sort(...)`` and ``xs.remove(v)`` as statements, on a list the method builds
    (``xs = []``, ``[...]``, a list comprehension, ``list(...)``, ``sorted(...)``), re-bind the list: ``xs.sort(key=f,
    reverse=r)`` is ``xs = sorted(xs, key=f, reverse=r)``, ``xs.remove(v)`` is ``_mp_at = xs.index(v)`` then ``xs =
    xs[:_mp_at] + xs[_mp_at + 1:]``.

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) compiles only ``append``, ``insert``, ``pop``, ``extend``,
    ``reverse`` and ``clear`` as in-place list methods. ``sort`` and ``remove`` run through the JIT Fallback on a copy
    of the list and leave the list as it was, silently: ``ks = list(heads); ks.sort()`` kept the insertion order
    (``[outs[k] for k in ks]`` gave the heads unsorted), ``[3, 1, 2].sort()`` stayed ``[3, 1, 2]``, ``remove(1)``
    removed nothing. ``sorted`` (mindport.runtime.graph_order in a graph), ``index`` and slices compile, and give
    Python's list in both modes; a sort the graph cannot do at compile time (tensors by value) is refused loudly there.
    Only lists the method builds and never hands over whole (``self.cache = xs`` would not see the rebinding), with
    ``sort``'s keywords ``key``/``reverse`` only and ``remove`` of one argument, each a statement of its own.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Heads(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "box": nn.Linear(4, 2)})

                    def forward(self, x):
                        outs = {name: head(x) for name, head in self.heads.items()}
                        names = list(outs)
                        names.sort()
                        names.remove("cls")
                        scales = [3, 1, 2]
                        scales.sort(reverse=True)
                        return torch.cat([outs[k] for k in names], 1) * scales[0]
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor
                from mindport.runtime import containers as mp_containers


                class Heads(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.heads = mp_containers.ModuleDict({"cls": nn.Dense(in_channels=4, out_channels=2), "box": nn.Dense(in_channels=4, out_channels=2)})

                    def construct(self, x):
                        outs = {name: head(x) for name, head in self.heads.items()}
                        names = list(outs)
                        names = sorted(names)
                        _mp_at = names.index("cls")
                        names = names[:_mp_at] + names[_mp_at + 1:]
                        scales = [3, 1, 2]
                        scales = sorted(scales, reverse=True)
                        return ops.cat(mp_tensor.promoted([outs[k] for k in names]), axis=1) * scales[0]
            """,
            note="The list is re-bound to its sorted copy and to the slices around the removed item.",
        ),
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self._lists[-1] is not None:
            self._lists[-1] = self._lists[-1] | _built_by_calls(node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        lists = self._lists[-1] if self._lists else None
        if not lists or len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.Expr):
            return updated_node
        call = updated_node.body[0].value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Name) and call.func.value.value in lists):
            return updated_node
        name, method, args = call.func.value.value, call.func.attr.value, call.args
        if method == "sort" and all(a.keyword is not None and a.keyword.value in _SORT_KEYWORDS for a in args):
            keywords = "".join(f", {a.keyword.value}={cst.Module([]).code_for_node(a.value)}" for a in args)
            lines = [parse_statement(f"{name} = sorted({name}{keywords})")]
        elif method == "remove" and len(args) == 1 and args[0].keyword is None and not args[0].star:
            value = cst.Module([]).code_for_node(args[0].value)
            lines = [parse_statement(f"{_TEMP} = {name}.index({value})"),
                     parse_statement(f"{name} = {name}[:{_TEMP}] + {name}[{_TEMP} + 1:]")]
        else:
            return updated_node
        lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(lines)


def _built_by_calls(node: cst.FunctionDef) -> frozenset[str]:
    """Names the function binds to ``list(...)`` or ``sorted(...)`` (a new list each time) and never hands over
    whole (``ys = xs``, ``self.cache = xs``)."""
    built, aliased = set(), set()

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            if isinstance(assign.value, cst.Name):
                aliased.add(assign.value.value)
            value = assign.value
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                    and isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
                    and value.func.value in ("list", "sorted"):
                built.add(assign.targets[0].target.value)

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node

    walk(node, Visitor())
    return frozenset(built - aliased)
