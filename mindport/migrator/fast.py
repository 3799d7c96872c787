"""The fast path: the LibCST pipeline's conversion, done on the standard library's ``ast`` tree by splicing text, for
the statements where that gives the very same output; every other top-level statement goes through the LibCST rules.

Why: LibCST parses (and prints) about 5,000 lines/s per core here and ``ast`` about 90,000, and nearly half the lines
of model code change, so a converter that parses every file with LibCST cannot pass about 10,000 lines/s on two
cores (``benchmarks/convert_bench.py`` prints both figures). Steps:

1. ``ast.parse`` and :class:`~mindport.migrator.ast_names.AstScopes` (the scopes ``names.py`` builds, on ``ast``);
2. each top-level statement is rewritten by :class:`StatementRewriter` into text edits: table calls, torch references,
   tensor methods, ``forward`` -> ``construct``. It *declines* (:class:`Decline`) at the first thing it does not do
   exactly as the rules do: an idiom rule's business, a diagnostic, a layout it does not reproduce;
3. a declined statement is parsed alone with LibCST and run through all the rules (``pipeline.make_rules``), with the
   file's scopes and context, and its code takes the statement's place. The declined statements share one set of
   rules, in source order, so what a rule learns from one (an optimizer's name, a Dataset's columns) serves the next;
4. torch imports are removed and MindSpore imports placed as ``imports.finalize_imports`` does.

The output is the LibCST pipeline's, byte for byte: ``tests/converter/test_fast_path.py`` compares both on the zoo,
a generated corpus, targeted layouts and randomly perturbed ones; ``MINDPORT_CROSSCHECK=1 pytest`` compares them under
every test; ``benchmarks/fast_path_sweep.py`` on any code. Files it does not take at all (a training step at module
level, autograd Functions, einops, top-level ``a; b``, ``\\r`` line ends, earlier ``# mindport:`` comments) go to
the LibCST pipeline whole.
"""
from __future__ import annotations

import ast
import re

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from mindport.migrator.ast_names import AstScopes, class_bases, class_summary
from mindport.migrator.base import LazyPositions, RuleRunner
from mindport.migrator.context import IMPORT_STYLE, FileContext, Options
from mindport.migrator.fast_statements import Decline, Source, StatementRewriter, _simple_string
from mindport.migrator.idioms import module_classes, runtime_import
from mindport.migrator.imports import ImportCleanup, choose_aliases, drop_unused_imports, import_statement
from mindport.migrator.names import build_scopes, is_torch
from mindport.migrator.walk import transform

# Text that sends a whole file to the LibCST pipeline: the rules that look across statements (training loops, data
# pipelines, autograd Functions, einops imports) and layouts whose offsets or whitespace the splicer does not model.
_FILE_DECLINES = re.compile(r"autograd|einops|\r|mindport:")
# a training step at module level (not in a function): TrainingLoopRule reads the whole module around it
_TRAINING_STEP = re.compile(r"\.\s*(?:backward|zero_grad)\b")
_TAIL = re.compile(r"(?:[ \t\f]*#[^\n]*\n|\n)*")  # after the last statement: empty lines and comments


class OffsetPositions:
    """Positions of a statement parsed alone, as lines of the whole file."""

    def __init__(self, module: cst.Module, lines: int) -> None:
        self._positions = LazyPositions(module)
        self._lines = lines

    def get(self, node, default=None):
        rng = self._positions.get(node)
        if rng is None:
            return default
        return CodeRange(CodePosition(rng.start.line + self._lines, rng.start.column),
                         CodePosition(rng.end.line + self._lines, rng.end.column))


def _is_compound(stmt: ast.stmt) -> bool:
    return hasattr(stmt, "body") and isinstance(stmt.body, list)


def _import_module(stmt) -> str:
    if type(stmt) is ast.Import:
        return stmt.names[0].name
    return "" if stmt.level else stmt.module or ""


_IMPORT_LINES: dict[tuple[str, str], str] = {}


def _import_line(module: str, alias: str) -> str:
    key = (module, alias)
    if key not in _IMPORT_LINES:
        _IMPORT_LINES[key] = cst.Module(body=[]).code_for_node(import_statement(module, alias))
    return _IMPORT_LINES[key]


def convert_fast(code: str, filename: str, registry, options: Options) -> tuple[str, FileContext] | None:
    """The converted text and the file's context, or None when the whole file is the LibCST pipeline's."""
    if _FILE_DECLINES.search(code):
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the LibCST pipeline reports it (MP201)
    body = tree.body
    if not body or any(body[i].lineno == body[i - 1].end_lineno for i in range(1, len(body))):
        return None  # empty, or top-level statements sharing a line (a; b): the LibCST pipeline's
    src = Source(code)
    if _TRAINING_STEP.search(code) and any(
            type(stmt) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            and _TRAINING_STEP.search(code, src.start(stmt), src.end(stmt)) for stmt in body):
        return None
    scopes = AstScopes(tree, code)
    aliases, present = choose_aliases(scopes.module_scope)
    ctx = FileContext(filename=filename, registry=registry, options=options, scopes={},
                      module_scope=scopes.module_scope, positions={}, aliases=aliases)
    ctx.class_summary = class_summary(tree, scopes.module_scope)
    ctx.class_bases = class_bases(body)
    classes = module_classes(ctx.class_summary, options.module_classes)
    rewriter = StatementRewriter(src, ctx, scopes, classes)

    segments = []  # (start, end) of each top-level statement, whole lines, decorators included
    for stmt in body:
        first = min((stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))))
        segments.append((src.line_start(first), src.line_end(stmt.end_lineno)))
    outputs: list[str | None] = [None] * len(body)
    runtime_modules: set[str] = set()
    torch_imports: list[int] = []
    declined: list[int] = []
    for i, stmt in enumerate(body):
        kind = type(stmt)
        start, end = segments[i]
        if kind is ast.Import or kind is ast.ImportFrom:
            if is_torch(_import_module(stmt)) and stmt.names[0].name != "*":
                torch_imports.append(i)
            outputs[i] = code[start:end]
            continue
        needed, sites = set(ctx.imports_needed), ctx.converted_sites
        try:
            outputs[i] = rewriter.statement(stmt, start, end)
            runtime_modules |= rewriter.runtime_modules
        except Decline:
            ctx.imports_needed, ctx.converted_sites = needed, sites
            declined.append(i)

    # the declined statements: each parsed alone and run through every rule, in the file's context
    ctx.libcst_statements = len(declined)
    from mindport.migrator.pipeline import make_rules

    minis = {}
    removed: set[int] = set()
    # One set of rules for all of them, in source order, as in one walk over the file: what a rule learns from one
    # statement (an optimizer's name, a Dataset's columns) is there for the next.
    rules = make_rules(ctx, classes)
    runner = RuleRunner(ctx, rules)
    for i in declined:
        start, end = segments[i]
        try:
            mini = cst.parse_module(code[start:end])
        except cst.ParserSyntaxError:
            return None
        built = build_scopes(mini, scopes.module_scope, scopes.before[i])
        ctx.scopes.update(built.scopes)
        ctx.positions = OffsetPositions(mini, code.count("\n", 0, start))
        minis[i] = (mini, transform(mini, runner))  # keep the original alive: ids key the scopes
        if not minis[i][1].body:
            removed.add(i)  # the rules removed the statement (with its leading lines, as RemoveFromParent does)
    for rule in rules:
        runtime_modules |= getattr(rule, "runtime_modules", set())

    # imports, as imports.finalize_imports: MindSpore imports where the first removed torch import was
    order = list(IMPORT_STYLE)
    modules = sorted(ctx.imports_needed - present, key=order.index)
    added = [(aliases[m], _import_line(m, aliases[m])) for m in modules]
    taken = {aliases[m] for m in ctx.imports_needed}
    used = ctx.torch_names_kept - taken
    for i, (original, converted) in minis.items():
        if "import" in code[segments[i][0]:segments[i][1]]:
            converted = transform(converted, ImportCleanup(used, []))
        outputs[i] = converted.code
    placed = False
    placed_at = -1
    for i in torch_imports:
        stmt = body[i]
        is_from = type(stmt) is ast.ImportFrom
        keep = [a for a in stmt.names if (a.asname or (a.name if is_from else a.name.split(".", 1)[0])) in used]
        start, end = segments[i]
        if keep:
            mini = cst.parse_module(code[start:end])
            outputs[i] = transform(mini, ImportCleanup(used, [])).code
        elif not placed and added:
            placed, placed_at = True, i
        else:
            outputs[i] = ""
            removed.add(i)
    insert_at = None  # where imports.ImportCleanup.leave_Module would insert them: before this statement
    if added and not placed:
        if removed:
            return None
        index = 0
        for i, stmt in enumerate(body):
            if type(stmt) in (ast.Import, ast.ImportFrom) or (
                    i == 0 and type(stmt) is ast.Expr and type(stmt.value) is ast.Constant
                    and isinstance(stmt.value.value, (str, bytes)) and _simple_string(code[slice(*segments[0])])):
                index = i + 1
            elif index or i > 0:
                break
        if index >= len(body):
            return None
        insert_at = index

    # the file as units: [text before the statement, statement text, kind]
    units: list[list] = []
    pos = 0
    for i in range(len(body)):
        start, end = segments[i]
        gap = code[pos:start]
        pos = end
        if insert_at == i:
            if i == 0:
                units.append([gap, "", "header"])
                gap = ""
            units.extend(["", line, "import"] for _, line in added)
        if i in removed:
            if i > 0:
                if _is_compound(body[i - 1]) and "#" in gap:
                    return None  # comments after a block: libcst splits them between its footer and leading lines
                gap = ""
            units.append([gap, "", "header"])
            continue
        if i == placed_at:
            units.append([gap, "", "header"])
            units.extend(["", line, "import"] for _, line in added)
            continue
        kind = type(body[i])
        if kind is ast.Import or kind is ast.ImportFrom:
            units.append([gap, outputs[i], "import"])
        elif i in minis:
            converted = minis[i][1]
            first = converted.body[0]
            expr = isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr)
            units.append([gap, outputs[i], "expr" if expr and len(converted.body) == 1 else "other"])
        else:
            units.append([gap, outputs[i], "expr" if kind is ast.Expr else "other"])
    if runtime_modules and not _place_runtime_imports(units, runtime_modules):
        return None
    tail = code[pos:]
    if not any(stmt for _, stmt, _ in units) or not _TAIL.fullmatch(tail):
        return None  # nothing left, or whitespace-only lines after the last statement: libcst's module footer
    text = "".join(gap + stmt for gap, stmt, _ in units) + tail
    return drop_unused_imports(text, added), ctx


def _place_runtime_imports(units: list[list], modules: set[str]) -> bool:
    """idioms.finalize_runtime on the units: the runtime imports the rules used, after the last top-level import.
    False when the placement is one this does not model (the LibCST pipeline then takes the file)."""
    statements = [u for u in units if u[2] != "header"]
    last = -1
    present: set[str] = set()
    for k, unit in enumerate(statements):
        if unit[2] == "import":
            last = k
            imp = ast.parse(unit[1]).body[0]
            if type(imp) is ast.ImportFrom:
                mod = "" if imp.level else imp.module or ""
                present.update([mod, *(f"{mod}.{a.name}" for a in imp.names if a.name != "*")])
            else:
                present.update(a.name for a in imp.names)
        elif k == 0 and unit[2] == "expr":
            last = max(last, 0)
    add = [m for m in sorted(modules) if m not in present]
    if not add:
        return True
    if last < 0:
        return False
    statements[last][1] += "".join(runtime_import(m) + "\n" for m in add)
    return True
