"""The converter rule ReprUnsetTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/repr_unset.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import read

_DYNAMIC = {"setattr", "add_module", "register_module", "register_buffer", "register_parameter", "__dict__",
            "__getattr__", "__setattr__", "insert_child_to_cell", "insert_param_to_cell"}


class ReprUnsetTransform(Rule):
    """A model class's ``__repr__``/``__str__`` that reads ``self.<name>`` its class never sets (batch 7 DropEdge's
    ``MultiLayerGCNBlock.__repr__`` prints ``self.aggrmethod``, which only another class sets) falls back to
    MindSpore's own description when that read fails: its body is put in ``try`` / ``except AttributeError: return
    super().__repr__()``.

    torch calls ``__repr__`` only when the model is printed, so the slip never shows in torch. MindSpore calls
    ``str(cell)`` of the model, and so every sub-Cell's ``__repr__``, each time it compiles a graph (GRAPH_MODE,
    ``@jit``): the AttributeError stopped the compilation (measured on 2.10). The rule acts only where the read is
    certain to fail: the class derives from ``nn.Module`` alone, never assigns the name on ``self`` nor defines it in
    its body, and sets no attribute by a computed name (``setattr``, ``add_module``, ``register_*``,
    ``__dict__``). Printing the converted model shows MindSpore's description of that Cell where torch raised.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class Block(nn.Module):
                    def __init__(self, d):
                        super().__init__()
                        self.fc = nn.Linear(d, d)

                    def forward(self, x):
                        return self.fc(x)

                    def __repr__(self):
                        return "%s %s" % (self.__class__.__name__, self.aggrmethod)
            """,
            after="""
                from mindspore import nn


                class Block(nn.Cell):
                    def __init__(self, d):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=d, out_channels=d)

                    def construct(self, x):
                        return self.fc(x)

                    def __repr__(self):
                        try:
                            return "%s %s" % (self.__class__.__name__, self.aggrmethod)
                        except AttributeError:  # Block never sets self.aggrmethod: MindSpore calls __repr__ when it compiles a graph
                            return super().__repr__()
            """,
            note="`aggrmethod` is set by another class only: torch's print would raise, MindSpore's compile did.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._unset: dict[int, tuple[str, list[str]]] = {}  # id(__repr__ FunctionDef) -> (class, names never set)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if len(node.bases) != 1 or not _dotted(node.bases[0].value).endswith("Module") \
                or not isinstance(node.body, cst.IndentedBlock):
            return
        assigned, dynamic = _assigned(node)
        if dynamic:
            return
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in ("__repr__", "__str__"):
                unset = sorted({name for name in _self_reads(statement)
                                if name not in assigned and not name.startswith("_") and name != "training"})
                if unset:
                    self._unset[id(statement)] = (node.name.value, unset)

    def leave_FunctionDef(self, original_node, updated_node):
        found = self._unset.get(id(original_node))
        if found is None or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        owner, names = found
        self.ctx.converted_sites += 1
        said = ", ".join(f"self.{n}" for n in names)
        handler = cst.ExceptHandler(
            type=cst.Name("AttributeError"),
            body=cst.IndentedBlock(
                body=[cst.parse_statement("return super().__repr__()")],
                header=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(
                    f"# {owner} never sets {said}: MindSpore calls __repr__ when it compiles a graph"))))
        guarded = cst.Try(body=updated_node.body, handlers=[handler])
        return updated_node.with_changes(body=cst.IndentedBlock(body=[guarded]))


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _assigned(cls: cst.ClassDef) -> tuple[set[str], bool]:
    """Names the class body defines or its methods assign on ``self``, and whether it sets any by a computed name."""
    names: set[str] = set()
    for statement in cls.body.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                    [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
                names |= {t.value for t in targets if isinstance(t, cst.Name)}

    class Finder(cst.CSTVisitor):
        dynamic = False

        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value in _DYNAMIC:
                Finder.dynamic = True

        def visit_Name(self, node: cst.Name) -> None:
            if node.value in _DYNAMIC:
                Finder.dynamic = True

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            for target in _flat(node.target):
                if isinstance(target, cst.Attribute) and _dotted(target.value) == "self":
                    names.add(target.attr.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self.visit_AssignTarget(cst.AssignTarget(target=node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self.visit_AssignTarget(cst.AssignTarget(target=node.target))

    finder = Finder()
    read(cls.body, finder)
    return names, Finder.dynamic


def _flat(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [t for e in target.elements for t in _flat(e.value)]
    return [target]


def _self_reads(function: cst.FunctionDef) -> set[str]:
    reads: set[str] = set()

    class Reads(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                reads.add(node.attr.value)

    read(function.body, Reads())
    return reads
