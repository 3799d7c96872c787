"""The converter rule UnboundFallbackTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/unbound_fallbacks.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.native_facts import own_nodes
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import code_of, is_docstring, own_bindings
from mindport.migrator.walk import parse_expression, parse_statement

_CATCHES_UNBOUND = ("Exception", "BaseException", "NameError", "UnboundLocalError")


class UnboundFallbackTransform(GraphMethodRule):
    """In a model's methods, ``try: skip = skip[...]`` / ``except: skip = 0``, where nothing binds ``skip`` before
    that ``try``, is ``if skip is None: skip = 0`` / ``else: skip = skip[...]``, with ``skip = None`` first in the
    method.

    WaveNet ports (``vincentherrmann/pytorch-wavenet`` and its many copies) give a loop's running sum its first value
    this way: on the first pass ``skip`` is unbound, reading it raises ``UnboundLocalError`` (a ``NameError``) and
    the handler starts the sum; on later passes the body runs. MindSpore's static graph (GRAPH_MODE, ``@jit``) has no
    ``try`` statement ("Unsupported statement 'Try'"). Starting the name at ``None`` and testing it is the same
    decision made without an exception, and a graph compiles it (a ``for`` over a range is unrolled, so the test is
    settled at each pass when the graph is built).

    Taken only when the decision is exactly "is the name bound yet": one handler that catches ``UnboundLocalError``
    (bare, ``Exception``, ``NameError`` ...; no ``as``, no ``finally``), its body binding the name, the ``try`` body
    reading it; every binding of the name in the method a plain ``name = value`` (or ``name += value``) at or after
    the ``try`` whose value is not ``None``, and the name not a parameter. Any other ``try`` is left as written (lint
    MS401 names it).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class WaveNet(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.convs = nn.ModuleList([nn.Conv1d(4, 4, 2) for _ in range(3)])

                    def forward(self, x):
                        for conv in self.convs:
                            x = conv(x)
                            try:
                                skip = skip[:, :, -x.size(2):]
                            except:
                                skip = 0
                            skip = x + skip
                        return skip
            """,
            after="""
                from mindspore import nn
                import mindport.runtime.unbatched  # noqa: F401  (layers taking inputs without a batch axis)


                class WaveNet(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.convs = nn.CellList([nn.Conv1d(in_channels=4, out_channels=4, kernel_size=2, has_bias=True, pad_mode='valid') for _ in range(3)])

                    def construct(self, x):
                        skip = None
                        for conv in self.convs:
                            x = conv(x)
                            if skip is None:
                                skip = 0
                            else:
                                skip = skip[:, :, -x.shape[2]:]
                            skip = x + skip
                        return skip
            """,
            note="The running sum's first value, taken by the handler on the first pass, is decided by a test.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._fallbacks: list[dict[int, str]] = []  # per function: id of a ``try`` taken -> the name it starts

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self._fallbacks.append(_fallbacks(node) if self.compiled else {})

    def leave_Try(self, original_node, updated_node):
        name = self._fallbacks[-1].get(id(original_node)) if self._fallbacks else None
        if name is None:
            return updated_node
        self.ctx.converted_sites += 1
        body = list(updated_node.body.body) + (list(updated_node.orelse.body.body) if updated_node.orelse else [])
        return cst.If(test=parse_expression(f"{name} is None"), body=updated_node.handlers[0].body,
                      orelse=cst.Else(body=cst.IndentedBlock(body=body)), leading_lines=updated_node.leading_lines)

    def leave_FunctionDef(self, original_node, updated_node):
        updated_node = super().leave_FunctionDef(original_node, updated_node)
        names = sorted(set(self._fallbacks.pop().values()))
        if not names:
            return updated_node
        lines = list(updated_node.body.body)
        first = 1 if lines and is_docstring(lines[0]) else 0
        starts = [parse_statement(f"{name} = None\n") for name in names if not _started(lines[first:], name)]
        return updated_node.with_changes(body=updated_node.body.with_changes(
            body=[*lines[:first], *starts, *lines[first:]]))


def _fallbacks(function: cst.FunctionDef) -> dict[int, str]:
    """The ``try`` statements of the method that give a name its first value (id -> the name)."""
    if not isinstance(function.body, cst.IndentedBlock):
        return {}
    nodes = own_nodes(function, cst.CSTNode)
    position = {id(node): i for i, node in enumerate(nodes)}
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                     *function.params.kwonly_params)}
    found: dict[int, str] = {}
    for node in nodes:
        if isinstance(node, cst.Try):
            name = _fallback_name(node)
            if name is not None and name not in params and _bound_only_from(nodes, position, node, name):
                found[id(node)] = name
    return found


def _started(lines: list, name: str) -> bool:
    """Whether ``name = None`` already stands before the statement holding the ``if name is None`` test (put there by
    BranchBindingTransform, which binds a name bound on one branch before the statement holding the branches)."""
    for line in lines:
        text = code_of(line).strip()
        if text == f"{name} = None":
            return True
        if f"if {name} is None:" in text:
            return False
    return False


def _fallback_name(node: cst.Try) -> str | None:
    """The name a ``try`` gives its first value in its one handler, when the handler catches ``UnboundLocalError``,
    binds the name, and the ``try`` body reads it; None for any other ``try``."""
    if node.finalbody is not None or len(node.handlers) != 1:
        return None
    handler = node.handlers[0]
    if handler.name is not None or not _catches_unbound(handler.type):
        return None
    bound = {n for line in _lines(handler.body) for s in _smalls(line) for n in own_bindings(s)}
    read = _names_read(node.body)
    found = [n for n in sorted(bound) if n in read]
    return found[0] if len(found) == 1 else None


def _catches_unbound(kind) -> bool:
    if kind is None:
        return True
    if isinstance(kind, cst.Name):
        return kind.value in _CATCHES_UNBOUND
    if isinstance(kind, cst.Tuple):
        return any(isinstance(e.value, cst.Name) and e.value.value in _CATCHES_UNBOUND for e in kind.elements)
    return False


def _lines(block) -> list:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [block]


def _smalls(line) -> list:
    return list(line.body) if isinstance(line, cst.SimpleStatementLine) else [line]


def _names_read(block) -> set[str]:
    """The names a block reads (not attribute names, keywords or assignment targets)."""
    found: set[str] = set()

    class _Reads(cst.CSTVisitor):
        def visit_Attribute(self, node):
            cst.CSTNode.visit(node.value, self)
            return False

        def visit_Arg(self, node):
            cst.CSTNode.visit(node.value, self)
            return False

        def visit_Assign(self, node):
            cst.CSTNode.visit(node.value, self)
            for target in node.targets:
                if not isinstance(target.target, cst.Name):
                    cst.CSTNode.visit(target.target, self)
            return False

        def visit_Name(self, node):
            found.add(node.value)

    block.visit(_Reads())
    return found


def _bound_only_from(nodes: list, position: dict, try_node: cst.Try, name: str) -> bool:
    """Every binding of ``name`` in the method is ``name = value`` (value not ``None``) or ``name += value`` at or
    after the ``try``: before it the name is unbound, and after a binding it is never ``None``."""
    for node in nodes:
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(item.name.value == name for item in node.names):
            return False
        if isinstance(node, cst.Del):
            return False
        if name not in own_bindings(node):
            continue
        if position[id(node)] < position[id(try_node)]:
            return False
        if isinstance(node, cst.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name) \
                    or (isinstance(node.value, cst.Name) and node.value.value == "None"):
                return False
        elif not (isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name)):
            return False
    return True

