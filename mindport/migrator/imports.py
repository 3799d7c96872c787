"""Imports, in one place: MindSpore imports added once (consistently named), torch imports that became unused
removed, project-local and other imports untouched."""
from __future__ import annotations

import re

import libcst as cst

from mindport.migrator.context import IMPORT_STYLE
from mindport.migrator.names import Scope, is_torch
from mindport.migrator.walk import parse_statement, transform


def choose_aliases(module_scope: Scope) -> tuple[dict[str, str], set[str]]:
    """Local names for the MindSpore modules; a name the file already uses for something else is not reused.

    Returns (alias per module, modules already imported under that alias).
    """
    aliases: dict[str, str] = {}
    present: set[str] = set()
    bound = module_scope.names
    for module, (_, preferred) in IMPORT_STYLE.items():
        existing = next((n for n, q in bound.items() if q == module), None)
        if existing is not None:
            aliases[module] = existing
            present.add(module)
            continue
        name = preferred
        while name in bound and not is_torch(bound[name]):
            name = "ms_" + name
        aliases[module] = name
    return aliases, present


def import_statement(module: str, alias: str) -> cst.SimpleStatementLine:
    text, preferred = IMPORT_STYLE[module]
    if alias != preferred:
        if text.startswith("from "):
            text = f"{text.split(' as ')[0]} as {alias}" if " as " in text else f"{text} as {alias}"
        else:
            text = f"import {module} as {alias}"
    return parse_statement(text)  # type: ignore[return-value]


def _alias_bound_name(alias: cst.ImportAlias, is_from: bool) -> str:
    if alias.asname is not None:
        return alias.asname.name.value  # type: ignore[union-attr]
    if is_from:
        return alias.name.value  # type: ignore[union-attr]
    return cst.Module(body=[]).code_for_node(alias.name).split(".", 1)[0]


def _import_module_name(node) -> str:
    if isinstance(node, cst.Import):
        return cst.Module(body=[]).code_for_node(node.names[0].name)
    if node.relative or node.module is None:
        return ""
    return cst.Module(body=[]).code_for_node(node.module)


_NO_IMPORTS_INSIDE = (cst.BaseExpression, cst.Decorator, cst.Parameters, cst.Arg, cst.WithItem, cst.AsName,
                      cst.Annotation)


class ImportCleanup(cst.CSTTransformer):
    """Removes unused torch imports; puts the needed MindSpore imports where the first torch import was."""

    def __init__(self, torch_kept: set[str], new_imports: list[cst.SimpleStatementLine]) -> None:
        super().__init__()
        self.used = torch_kept
        self.new_imports = new_imports
        self.placed = False
        self._depth = 0

    def visit_IndentedBlock(self, node) -> None:
        self._depth += 1

    def leave_IndentedBlock(self, original_node, updated_node):
        self._depth -= 1
        return updated_node

    def visit_SimpleStatementLine(self, node) -> bool:
        return False  # imports are whole statements: no need to walk the expressions inside any line

    def on_visit(self, node) -> bool:
        if isinstance(node, _NO_IMPORTS_INSIDE):
            return False  # conditions, decorators, parameters: no statement can be inside
        return super().on_visit(node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) != 1 or not isinstance(updated_node.body[0], (cst.Import, cst.ImportFrom)):
            return updated_node
        stmt = updated_node.body[0]
        if not is_torch(_import_module_name(stmt)) or isinstance(getattr(stmt, "names", None), cst.ImportStar):
            return updated_node
        is_from = isinstance(stmt, cst.ImportFrom)
        keep = [a for a in stmt.names if _alias_bound_name(a, is_from) in self.used]
        if keep:
            keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(body=[stmt.with_changes(names=keep)])
        if self._depth == 0 and not self.placed and self.new_imports:
            self.placed = True
            first = self.new_imports[0].with_changes(leading_lines=updated_node.leading_lines)
            return cst.FlattenSentinel([first, *self.new_imports[1:]])
        return cst.RemoveFromParent()

    def leave_Module(self, original_node, updated_node):
        if self.placed or not self.new_imports:
            return updated_node
        body = list(updated_node.body)
        index = 0
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.SimpleStatementLine) and (
                isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))
                or (i == 0 and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString))
            ):
                index = i + 1
            elif index or i > 0:
                break
        return updated_node.with_changes(body=[*body[:index], *self.new_imports, *body[index:]])


def finalize_imports(module: cst.Module, needed: set[str], aliases: dict[str, str], present: set[str],
                     torch_kept: set[str]) -> tuple[cst.Module, list[tuple[str, str]]]:
    """Add the MindSpore imports the rules used; keep a torch import only if a flagged site still needs it.

    Returns the module and the imports added, as (local name, line); ``drop_unused_imports`` removes the ones no
    converted line uses, on the generated text (cheaper than another walk over the tree).
    """
    order = list(IMPORT_STYLE)
    modules = sorted(needed - present, key=order.index)
    new = [import_statement(m, aliases[m]) for m in modules]
    # A torch import whose name the MindSpore code now uses (`nn`) must go even if a flagged site still refers to
    # it: keeping it would shadow MindSpore's `nn` and break every converted line; the flagged sites say what is left.
    taken = {aliases[m] for m in needed}
    module = transform(module, ImportCleanup(torch_kept - taken, new))
    return module, [(aliases[m], module.code_for_node(stmt)) for m, stmt in zip(modules, new)]


def drop_unused_imports(code: str, added: list[tuple[str, str]]) -> str:
    """Remove an added import whose name no converted line uses (a rewrite asked for it, then left the call as it
    was). A mention in a comment or string counts as a use: at worst an unused import stays."""
    for name, line in added:
        rest = code.replace(line, "", 1)
        if not re.search(rf"(?<![\w.]){re.escape(name)}\b", rest):
            code = rest
    return code
