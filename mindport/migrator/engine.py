"""The converter's engine: one file through every rule in one traversal, then the imports.

``run_pipeline`` parses nothing itself: it builds the file's context (scopes, MindSpore import aliases, which classes
are nn.Module subclasses), runs the rules (``rules/__init__.py`` gives their order) with a :class:`RuleRunner`, and
finalizes the imports (``imports.py``). For each node the runner calls the rules' ``leave_`` hooks in order, and the
first rule that returns a different node wins (later rules do not see that node again), except for a class, a
function or a block, which every rule closes (the later rules' hooks run on it as rewritten). One traversal keeps the
original nodes (and so their positions) for diagnostics, and costs one walk instead of one per concern.

A flagged site's statement keeps its torch meaning (``keep_torch.py``: the statement as written, torch names fully
qualified, ``import torch`` kept; for a compound statement, the part of its header holding the site) and gets a
``# mindport: MP101 …`` comment (a comment line above it for compound statements), so the output always parses,
never mixes torch and MindSpore on one line, and says where to look.
"""
from __future__ import annotations

import libcst as cst

from mindport.mappings import Registry
from mindport.migrator.context import FileContext, Options
from mindport.migrator.imports import (
    choose_aliases,
    drop_unread_torch_stars,
    drop_unused_imports,
    finalize_imports,
    split_import_lines,
    find_reexports,
    finalize_runtime,
)
from mindport.migrator.local_bodies import write_local_bodies
from mindport.migrator.keep_torch import qualify, revert_header
from mindport.migrator.rules import make_rules
from mindport.migrator.rules.device import drop_self_device_moves
from mindport.migrator.rules.base import Rule
from mindport.migrator.keyword_dicts import keyword_dict_arguments
from mindport.migrator.grad_helpers import inline_grad_helpers
from mindport.migrator.native_facts import clear_caches, native_batched_functions, observed_input_ranks, uses_name
from mindport.migrator.rules.references import _torch_import_names as torch_import_names
from mindport.migrator.rules.references import literal_namespace_reads
from mindport.migrator.rules.module_class import class_summary, module_classes
from mindport.migrator.scopes import build_scopes, dotted_name
from mindport.migrator.walk import transform
from mindport.names import Scope

COMMENT_PREFIX = "# mindport: "
_SCOPE_NODES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_COMPOUND = (cst.If, cst.For, cst.While, cst.With, cst.Try, cst.FunctionDef, cst.ClassDef)
_STATEMENTS = (cst.SimpleStatementLine, *_COMPOUND)
# exact-type sets for the per-node checks: isinstance on LibCST's ABC-based classes is slow, and these are leaf classes
_IMPORT_TYPES = frozenset({cst.Import, cst.ImportFrom})
_SCOPE_TYPES = frozenset(_SCOPE_NODES)
_STATEMENT_TYPES = frozenset(_STATEMENTS)
# A class, a function or a block is closed by every rule that opened it: rules keep stacks (the enclosing functions,
# classes, narrowings) that their leave hooks pop, so one rule renaming ``forward`` to ``construct`` must not stop the
# later rules' hooks for that node; they run on the node as rewritten so far.
# Module: every rule's leave_Module runs (einops layer classes and native factories both insert definitions: the
# first one's rewrite stopped the second, and x_transformers.py lost its ``def make_linear``)
_CHAINED = frozenset({cst.ClassDef, cst.FunctionDef, cst.IndentedBlock, cst.Module})


def run_pipeline(module: cst.Module, filename: str, registry: Registry, options: Options,
                 without: tuple[type[Rule], ...] = ()) -> tuple[str, FileContext]:
    """Every rule over the parsed file, in order; returns the converted source text and the file's context.
    ``without``: rules left out (the examples' tests check that each example needs its rule)."""
    clear_caches()  # a worker converts file after file: the per-node caches hold one file's tree at a time
    first = module
    module = literal_namespace_reads(module)  # getattr(F, 'tanh') is F.tanh (rules/references.py)
    module = split_import_lines(module)  # `import math; import torch`: one statement per line (imports.py)
    module = drop_self_device_moves(module)  # self.a = self.a.to(x.device): nothing on MindSpore (rules/device.py)
    module = keyword_dict_arguments(module, torch_import_names(module))  # torch.zeros(s, **to(x)): keywords written out
    module = inline_grad_helpers(module, options.grad_helpers)  # gradients(u, x) of a torch.autograd.grad helper
    scopes = build_scopes(module, options.local_packages, options.star_bindings, options.return_kinds)
    positions = LazyPositions(module)  # resolved on the first diagnostic only
    aliases, present = choose_aliases(scopes.module_scope, scopes.scopes.values())
    ctx = FileContext(filename=filename, registry=registry, options=options, scopes=scopes.scopes,
                      module_scope=scopes.module_scope, positions=positions, aliases=aliases)
    ctx.fixed_aliases = scopes.fixed_aliases()
    ctx.seen_names = frozenset(scopes.seen)
    ctx.import_roots = frozenset(scopes.import_roots)
    ctx.class_summary = class_summary(module, scopes.module_scope)
    classes = module_classes(ctx.class_summary, options.module_classes)
    rules = make_rules(ctx, classes, without)
    original = first  # the literal reads alone count as a change
    module = transform(module, RuleRunner(ctx, rules))
    module, native = native_batched_functions(  # a pool's input shown batched: MindSpore's own op
        module, aliases, observed_input_ranks(options.decided_sites))
    if native:
        ctx.imports_needed.add("mindspore.ops")
        if not uses_name(module, aliases["mindport.runtime.unbatched"]):
            ctx.imports_needed.discard("mindport.runtime.unbatched")
    module = write_local_bodies(module, ctx)  # the file-local native bodies its sites call (local_bodies.py)
    reexports = find_reexports(module, ctx, scopes.seen)
    module, added = finalize_imports(module, ctx.imports_needed, aliases, present, ctx.torch_names_kept,
                                     ctx.torch_roots_kept, scopes.module_scope, reexports,
                                     frozenset(name for name, _ in options.star_bindings))
    builds = tuple((fact.split(":")[1], fact.endswith(":batched")) for *_, fact in sorted(options.decided_sites)
                   if fact.startswith("built:"))  # the recorded run's layer builds, in source order
    module = finalize_runtime(module, rules, module is not original, builds)
    if any(batched for _, batched in builds) and module is not original:
        _report_observed_builds(module, ctx, options)  # mindport.runtime imports (einops backend, parameter containers)
    # No rule changed anything: the caller keeps its source text as it was (LibCST 1.9 does not give back every
    # file byte for byte: a whitespace-only blank line after another one at the end of the file is dropped).
    ctx.tree_changed = module is not original
    if ctx.tree_changed:  # walk.transform: rebuilds only the calls it changes (0.018 s CPU on x_transformers.py's
        module = transform(module, ParenthesizeGenerators())  # converted tree, module.visit 0.198 s)
    clear_caches()
    return drop_unread_torch_stars(drop_unused_imports(module.code, added)), ctx


def _report_observed_builds(module: cst.Module, ctx: FileContext, options: Options) -> None:
    """A file that loads no runtime module only because a recorded run saw every call of its layers batched
    (native_facts.unbatched_handling's ``observed``): each such build rests on an observation (MP108, info)."""
    from mindport.errors import Diagnostic
    from mindport.migrator.native_facts import unbatched_handling

    if "mindport.runtime" in module.code or not unbatched_handling(module):
        return
    for line, col, _, _, fact in sorted(options.decided_sites):
        if fact.startswith("built:") and fact.endswith(":batched"):
            ctx.diagnostics.append(Diagnostic(
                "MP108", f"converted on an observation of the recorded torch run ({fact}): every call of the layer "
                "built here had a batch in that run, so the file does not load mindport.runtime.unbatched; an "
                "unbatched input would be refused by MindSpore's layer", ctx.filename, line, col + 1,
                "keep the port's inputs batched, or convert without --facts", severity="info"))


class ParenthesizeGenerators(cst.CSTTransformer):
    """``self.layers.extend(Block() for _ in range(n))`` whose conversion puts the receiver first
    (``mp_nn.extend(self.layers, Block() for _ in range(n))``): a bare generator expression may only be a call's
    sole argument, so one among other arguments gets its own parentheses (whichever rule added the others)."""

    def leave_Call(self, original_node, updated_node):
        if len(updated_node.args) < 2 or not any(isinstance(a.value, cst.GeneratorExp) and not a.value.lpar
                                                 for a in updated_node.args):
            return updated_node
        return updated_node.with_changes(args=[
            a.with_changes(value=a.value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
            if isinstance(a.value, cst.GeneratorExp) and not a.value.lpar else a for a in updated_node.args])


class RuleRunner(cst.CSTTransformer):
    def __init__(self, ctx: FileContext, rules: list[Rule]) -> None:
        super().__init__()
        self.ctx = ctx
        self.rules = rules
        for rule in rules:
            rule.runner = self
        # node kind -> the rules' hooks for it, in rule order (one dict lookup per node instead of one per rule)
        self._visit: dict[str, list] = {}
        self._leave: dict[str, list] = {}
        for rule in rules:
            for kind, hook in rule.hooks("visit_").items():
                self._visit.setdefault(kind, []).append(hook)
            for kind, hook in rule.hooks("leave_").items():
                self._leave.setdefault(kind, []).append(hook)
        self._scopes: list[Scope] = [ctx.module_scope]
        self._pending: list[_Pending] = []
        # names converted code may use for MindSpore modules, and torch names a star import brought (the converted
        # module they came from no longer binds them): a flagged statement writes them in full
        self._taken = frozenset(ctx.aliases.values()) | {name for name, _ in ctx.options.star_bindings}

    # libcst calls these for every field of every node; no rule uses per-field hooks, so skip the lookups.
    def on_visit_attribute(self, node, attribute) -> None:
        return None

    def on_leave_attribute(self, original_node, attribute) -> None:
        return None

    @property
    def scope(self) -> Scope:
        return self._scopes[-1]

    def flag(self, node, code, message, suggestion="", api="") -> None:
        self.ctx.diagnose(node, code, message, suggestion, api)
        if self._pending:
            self._pending[-1].notes.append(f"{code} {message}")
            self._pending[-1].flagged.append(node)
        else:
            self._keep_import_of(node)

    def remark(self, node, code, message, suggestion="", api="") -> None:
        """A site converted as well as it can be, whose result still differs from torch's in a way no rule can
        remove (``"{}".format(t)``: MindSpore's text of a tensor): a warning and the statement's comment, without
        putting the statement back to torch. Its operands are MindSpore values at run time, so a torch statement
        could not give torch's result either: it would stop the port (``torch.isfinite(y0)`` of a MindSpore tensor)."""
        self.ctx.diagnose(node, code, message, suggestion, api, severity="warning")
        if self._pending:
            self._pending[-1].remarks.append(f"{code} {message}")

    def _keep_import_of(self, node) -> None:
        """A flagged node left as written (not inside a statement that goes back to torch): its import stays."""
        head = dotted_name(node.func if isinstance(node, cst.Call) else node)
        if head:
            self.ctx.torch_names_kept.add(head.split(".", 1)[0])

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        if kind in _IMPORT_TYPES:
            return False  # imports are finalize_imports' business
        if kind in _SCOPE_TYPES:
            self._scopes.append(self.ctx.scopes.get(id(node), self.scope))
        if kind in _STATEMENT_TYPES:
            self._pending.append(_Pending(self.ctx.converted_sites))
        for hook in self._visit.get(kind.__name__, ()):
            hook(node)
        return True

    def on_leave(self, original_node, updated_node):
        result = updated_node
        kind = type(original_node)
        if kind in _IMPORT_TYPES:
            return updated_node
        for hook in self._leave.get(kind.__name__, ()):
            try:
                new = hook(original_node, result)
            except RecursionError:
                raise  # the file is too deep for the converter: MP299, the file copied unchanged
            except Exception as exc:  # noqa: BLE001 - one rule's fault at one site costs that statement only
                if kind in _CHAINED:
                    raise  # a class/function/block closes every rule's stacks: MP299 for the file, as before
                self._internal_error(original_node, hook, exc)
                break
            if new is not result:
                result = _keep_parentheses(result, new)
                if kind not in _CHAINED or type(result) is not kind:
                    break  # the first rule that rewrites an expression or a statement wins
        if kind in _SCOPE_TYPES:
            self._scopes.pop()
        if kind in _STATEMENT_TYPES:
            pending = self._pending.pop()
            sites = self.ctx.converted_sites - pending.start
            own = sites - pending.nested  # converted in this statement, not in the statements inside it
            if pending.notes:
                pending.notes.extend(pending.remarks)
                result, own_kept = self._keep_torch(original_node, result, pending, own)
                sites -= own - own_kept
            elif pending.remarks:
                result = _remarked(result, pending.remarks)
                if result is None:  # the statement was removed: its remarks go to the statement around it
                    result = cst.RemovalSentinel.REMOVE
                    if self._pending:
                        self._pending[-1].remarks.extend(pending.remarks)
            if self._pending:
                self._pending[-1].nested += sites
        return result

    def supersede(self) -> None:
        """The statement being left is replaced whole by the rule calling this (UnboundNameTransform's ``raise
        NameError``): the sites flagged in it are gone with it, and so are their diagnostics (a flagged statement
        would otherwise go back to its torch form, undoing the rule)."""
        pending = self._pending[-1]
        where = {self.ctx.position(node) for node in pending.flagged}
        self.ctx.diagnostics[:] = [d for d in self.ctx.diagnostics
                                   if d.file != self.ctx.filename or (d.line, d.column) not in where]
        pending.notes.clear()
        pending.flagged.clear()

    def _internal_error(self, node, hook, exc: Exception) -> None:
        """MP298: a rule failed at this node; its statement goes back to its torch form, flagged."""
        where = getattr(hook, "__qualname__", "a rule")
        text = str(exc).splitlines()[0][:200] if str(exc) else ""
        self.flag(node, "MP298", f"internal error in {where} at this site ({type(exc).__name__}: {text}): the "
                  "statement keeps its torch form", "report it with the statement")

    def _keep_torch(self, original_node, result, pending: "_Pending", own: int):
        """A statement with flagged sites: back to its torch meaning (``keep_torch.py``), with its comment.
        Returns the statement and how many of its own converted sites still count."""
        notes = pending.notes
        flagged = {id(n) for n in pending.flagged}

        def keep(node):
            return qualify(node, self.scope, self.ctx.scopes, self.ctx.torch_roots_kept, self.ctx.torch_names_kept,
                           self._taken)

        if isinstance(original_node, cst.SimpleStatementLine):
            self.ctx.converted_sites -= own  # the whole line is torch again
            return _trailing_comment(keep(original_node), notes), 0
        if isinstance(result, _COMPOUND):
            result, reverted = revert_header(original_node, result, flagged, keep)
            if not reverted:
                for node in pending.flagged:
                    self._keep_import_of(node)
            else:
                self.ctx.converted_sites -= own  # the header's sites (an undercount when one part of several went back)
                own = 0
            return _leading_comment(result, notes), own
        for node in pending.flagged:  # the statement became something else (a rule replaced it): notes go up
            self._keep_import_of(node)
        if self._pending:
            self._pending[-1].notes.extend(notes)
        return result, own


class _Pending:
    """What one statement collects while its nodes are visited: diagnostics' notes, the flagged nodes, and the
    converted-site count when it started (``nested``: sites counted in the statements inside it)."""

    __slots__ = ("notes", "remarks", "flagged", "start", "nested")

    def __init__(self, start: int) -> None:
        self.notes: list[str] = []
        self.remarks: list[str] = []  # warnings that leave the statement converted (``RuleRunner.remark``)
        self.flagged: list = []
        self.start = start
        self.nested = 0


def _keep_parentheses(old, new):
    """An expression rewritten into a new node keeps the parentheses written around it (and the comments in them):
    ``(  # the dtype\n torch.float32\n)`` -> ``(  # the dtype\n ms.float32\n)``."""
    lpar = getattr(old, "lpar", None)
    if lpar and isinstance(new, cst.BaseExpression) and not getattr(new, "lpar", True):
        return new.with_changes(lpar=lpar, rpar=old.rpar)
    return new


def _trailing_comment(line: cst.SimpleStatementLine, notes: list[str]) -> cst.SimpleStatementLine:
    existing = line.trailing_whitespace.comment
    text = _one_line(COMMENT_PREFIX + "; ".join(notes))
    if existing is not None and COMMENT_PREFIX in existing.value:
        return line  # converted before: the comment is already there (idempotence)
    if existing is not None:
        text = existing.value + "  " + text
    return line.with_changes(trailing_whitespace=line.trailing_whitespace.with_changes(
        whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(text)))


def _remarked(result, remarks: list[str]):
    """A converted statement with its warnings as a comment: trailing on a simple line, leading on a compound one, on
    the first of the statements a rule wrote in its place (a ``FlattenSentinel``: ``x[:, i] += r`` written as two
    lines); None when the rule removed the statement."""
    if isinstance(result, cst.FlattenSentinel):
        nodes = list(result.nodes)
        if not nodes:
            return None
        return cst.FlattenSentinel([_remarked(nodes[0], remarks), *nodes[1:]])
    if isinstance(result, cst.RemovalSentinel):
        return None
    if isinstance(result, cst.SimpleStatementLine):
        return _trailing_comment(result, remarks)
    return _leading_comment(result, remarks)


def _leading_comment(node, notes: list[str]):
    text = _one_line(COMMENT_PREFIX + "; ".join(notes))
    if any(line.comment is not None and COMMENT_PREFIX in line.comment.value for line in node.leading_lines):
        return node
    return node.with_changes(leading_lines=[*node.leading_lines, cst.EmptyLine(comment=cst.Comment(text))])


def _one_line(text: str) -> str:
    return " ".join(text.split())


class LazyPositions:
    """Node -> CodeRange, computed on the first diagnostic only: most files convert without one, and position
    metadata costs about two parses. The original tree is immutable, so resolving late gives the same ranges."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._positions = None

    def get(self, node, default=None):
        if self._positions is None:
            from libcst.metadata import MetadataWrapper, PositionProvider

            self._positions = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._positions.get(node, default)

    def __getitem__(self, node):
        value = self.get(node)
        if value is None:
            raise KeyError(node)
        return value
