"""The rewriter: PyTorch source in, MindSpore source out, with a diagnostic for whatever it could not convert.

``convert_source`` converts one string; ``convert_path`` mirrors a file or a directory tree (see ``repo.py``).
"""
from __future__ import annotations

import ast
import functools
import gc
from dataclasses import dataclass, field

import libcst as cst

from mindport.errors import Diagnostic
from mindport.mappings import load_registry
from mindport.migrator.context import Options
from mindport.migrator.engine import run_pipeline
from mindport.migrator.project import (conv1d_settings_unread as _conv1d_settings_unread, float64_free as _float64_free,
                                       return_kinds, backward_params as _backward_params,
                                       record_classes as _record_classes, held_cells as _held_cells)


@dataclass
class ConversionResult:
    code: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    converted_sites: int = 0
    changed: bool = False
    class_summary: tuple = ()  # idioms.class_summary of the file (convert_path checks module classes with it)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


def convert_source(code: str, filename: str = "<string>", *, target: str = "nn",
                   ms_version: tuple[int, int] | None = None, module_classes=frozenset(),
                   local_packages=frozenset(), star_bindings=(), device: str = "any",
                   object_classes=frozenset(), list_names=frozenset(),
                   function_classes=frozenset(), float_sites=(), uniform_sites=(), decided_sites=(), return_kinds=None,
                   imported_names=frozenset(), float64_free=None, conv1d_settings_unread=None,
                   tensor_free: bool = False, argument_writers=(), backward_params=None,
                   record_classes=None, grad_helpers=(), loader_reads=frozenset(),
                   loader_params=(), held_cells=None) -> ConversionResult:
    """Convert PyTorch source text to MindSpore source text.

    ``local_packages``: the top-level packages of the project the file belongs to (a torch-based package among them,
    e.g. converting timm itself, is the project's code). ``star_bindings``: ((name, torch name), ...) the file's
    ``from <project module> import *`` lines bring (``convert_path`` reads them from the project). A syntax error gives
    one MP201 diagnostic and the code back unchanged. ``device``: the device the port is for ("any", "cpu", "gpu",
    "ascend"); on "gpu"/"ascend" the guards against MindSpore's CPU kernel defects become MindSpore's own ops.
    ``object_classes``: the project's classes that are not modules, from every file (``convert_path``).
    ``function_classes``: the project's custom autograd Functions, from every file (``convert_path``).
    ``list_names``: the names the project binds to a list in any of its files (``convert_path`` reads them:
    ``mindport.migrator.project.list_names``); a size given by a parameter or attribute of such a name may be a list.
    ``float_sites``: the file's call sites a recorded torch run saw only floating inputs at (``mindport.observed``:
    ``Facts.float_sites``); an int-to-float guard there is MindSpore's own op. ``uniform_sites``: its joins
    (torch.cat, stack, ...) whose tensors had one dtype in every call of the run (``Facts.uniform_sites``).
    ``decided_sites``: its sites whose every recorded call made a run-time decision one way, and its layer builds
    with what their calls' inputs were (``Facts.decided_sites``).
    ``return_kinds``: ((name, kind), ...) what the project's functions and methods return, across its files
    (``mindport.migrator.project.return_kinds``): the receiver of an ambiguous method (``repeat``, ``sum``); None
    (a file alone): its own functions'. ``imported_names``: the names other files of the project import from its
    modules (``mindport.migrator.project.imported_names``): a torch name the file imports and they may import from
    it stays bound. ``float64_free``: can no float64 tensor come to be in the project
    (``mindport.migrator.project.float64_free``)? None (a file alone): the file's own answer.
    ``conv1d_settings_unread``: does no code of the project touch a layer's kernel_size, stride, dilation or padding
    (``mindport.migrator.project.conv1d_settings_unread``)? None (a file alone): the file's own answer.
    ``tensor_free``: no torch tensor can reach this file of the project (``mindport.migrator.project.
    tensor_free_files``): it is returned as it is. ``argument_writers``: ((name, params, written params), ...) the
    project's functions that write into an argument (``mindport.migrator.project.argument_writers``): a call of one
    this file imports binds the written tensor again. ``record_classes``: the project's dataclass records a model
    builds in its forward (``mindport.migrator.project.record_classes``), written as dicts; None (a file alone): its
    own. ``grad_helpers``: ((module as imported, name, source, import bindings), ...) the helpers of several lines
    holding ``torch.autograd.grad`` in the project's other modules (``mindport.migrator.grad_helpers.
    module_grad_helpers``): a call of one this file imports is written out where it stands. ``loader_reads``: the
    names of the project's functions whose results some file reads a DataLoader-only field of (``.dataset`` ...:
    ``mindport.migrator.project.loader_field_reads``): a DataLoader such a function returns keeps torch's semantics. ``loader_params``: ((name, params, read
    params), ...) the project's functions, methods and classes reading such a field of what a parameter holds
    (``mindport.migrator.project.loader_param_reads``): a DataLoader handed to one keeps torch's semantics.
    ``held_cells``: ((class, parent class, attribute), ...) the project's sub-Cells one parent calls more than once in
    its forward (``mindport.migrator.project.held_cells``): their state is passed from call to call; None (a file
    alone): its own.
    """
    if tensor_free:
        return ConversionResult(code=code)
    if return_kinds is None:
        return_kinds = _own_return_kinds(code)
    if backward_params is None:
        backward_params = _own_fact(_backward_params, code) or ()
    if record_classes is None:
        record_classes = _own_fact(_record_classes, code) or ()
    if held_cells is None:
        held_cells = _own_fact(_held_cells, code) or ()
    if float64_free is None:
        float64_free = _own_fact(_float64_free, code)
    if conv1d_settings_unread is None:
        conv1d_settings_unread = _own_fact(_conv1d_settings_unread, code)
    options = Options(target=target, ms_version=ms_version or installed_ms_version(),
                      module_classes=frozenset(module_classes), local_packages=frozenset(local_packages),
                      star_bindings=tuple(tuple(b) for b in star_bindings), device=device,
                      object_classes=frozenset(object_classes), list_names=frozenset(list_names),
                      function_classes=frozenset(function_classes),
                      float_sites=frozenset(tuple(site) for site in float_sites),
                      uniform_sites=frozenset(tuple(site) for site in uniform_sites),
                      decided_sites=frozenset(tuple(site) for site in decided_sites),
                      return_kinds=tuple(tuple(k) for k in return_kinds),
                      backward_params=tuple((n, tuple(p), tuple(b)) for n, p, b in backward_params),
                      record_classes=tuple((n, tuple(tuple(f) for f in fs)) for n, fs in record_classes),
                      held_cells=tuple(tuple(h) for h in held_cells),
                      imported_names=frozenset(imported_names), float64_free=bool(float64_free),
                      conv1d_settings_unread=bool(conv1d_settings_unread),
                      argument_writers=tuple((n, tuple(p), tuple(w)) for n, p, w in argument_writers),
                      grad_helpers=tuple((k, n, src, tuple((b, tuple(t)) for b, t in bind))
                                         for k, n, src, bind in grad_helpers),
                      loader_reads=frozenset(loader_reads),
                      loader_params=tuple((n, tuple(p), tuple(r)) for n, p, r in loader_params))
    registry = load_registry()
    collecting = gc.isenabled()
    gc.disable()  # syntax trees are acyclic: the cycle collector's passes over them are pure cost (about 15 %)
    try:
        try:
            module = _parse(code)
        except cst.ParserSyntaxError as exc:
            diag = Diagnostic("MP201", f"syntax error: {exc.message}", filename, exc.raw_line,
                              exc.raw_column + 1, "fix the syntax error; the file was copied unchanged")
            return ConversionResult(code=code, diagnostics=[diag])
        new_code, ctx = run_pipeline(module, filename, registry, options)
        if not ctx.tree_changed:
            new_code = code
        else:
            broken = _syntax_error(new_code)
            if broken is not None and "f-string" in broken:  # a replacement's quotes inside an f-string's braces
                new_code = requote_fstrings(new_code)
                broken = _syntax_error(new_code)
            if broken is not None:  # a converter bug: never write a file that does not parse
                diag = Diagnostic("MP299", f"internal error: the converted file would not parse ({broken}); the file "
                                  "was copied unchanged", filename, 1, 1, "report it with the file; convert it by hand")
                return ConversionResult(code=code, diagnostics=[diag], class_summary=ctx.class_summary)
    finally:
        if collecting:
            gc.enable()
    return ConversionResult(code=new_code, diagnostics=sorted(ctx.diagnostics, key=lambda d: (d.line, d.column)),
                            converted_sites=ctx.converted_sites, changed=new_code != code,
                            class_summary=ctx.class_summary)


def _parse(code: str) -> cst.Module:
    """LibCST's module of ``code``. Python-2-era files mixing tabs and spaces in one indentation (``8 spaces + tab``
    under an ``if`` of 8 spaces: DBPN's dbpn.py) are valid Python 3, which counts a tab to the next multiple of 8,
    but LibCST's tokenizer refuses them ("no matching outer block for dedent"): such a file is parsed, and converted,
    with the leading tabs of its code lines expanded the way Python reads them (lines inside a string are kept)."""
    try:
        return cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        refused = exc
    expanded = _expand_indentation_tabs(code)
    if expanded == code or _syntax_error(code) is not None:  # not the tab case, or not Python either
        raise refused
    try:
        return cst.parse_module(expanded)
    except cst.ParserSyntaxError:
        raise refused from None


def _expand_indentation_tabs(code: str) -> str:
    """``code`` with each code line's leading tabs expanded to Python's columns (tab size 8); the lines of a
    multi-line string, whose whitespace is data, are left as they are."""
    import io
    import tokenize

    inside: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.start[0] != tok.end[0] and tok.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)):
                inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return code
    lines = code.splitlines(keepends=True)
    for row, line in enumerate(lines, start=1):
        body = line.lstrip(" \t")
        lead = line[:len(line) - len(body)]
        if "\t" in lead and row not in inside:
            lines[row - 1] = lead.expandtabs(8) + body
    return "".join(lines)


class _Requote(cst.CSTTransformer):
    """String literals inside an f-string's braces take the quote the f-string does not use."""

    def __init__(self) -> None:
        super().__init__()
        self._quotes: list[str] = []

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._quotes.append(node.end)

    def leave_FormattedString(self, original_node, updated_node):
        self._quotes.pop()
        return updated_node

    def leave_SimpleString(self, original_node, updated_node):
        if not self._quotes or len(self._quotes[-1]) != 1 or updated_node.quote != self._quotes[-1]:
            return updated_node
        other = "'" if updated_node.quote == '"' else '"'
        body = updated_node.raw_value
        if other in body or "\\" in body:
            return updated_node
        return updated_node.with_changes(value=f"{updated_node.prefix}{other}{body}{other}")


def requote_fstrings(code: str) -> str:
    """``f"({torch.cuda.device_count()})"`` converted to a call with a string argument (``"GPU"``) inside the braces:
    Python before 3.12 refuses the f-string's own quote there ("f-string: unmatched '('"), LibCST reads it. The
    strings in braces take the other quote; the rest of the file is unchanged."""
    try:
        return cst.parse_module(code).visit(_Requote()).code
    except cst.ParserSyntaxError:
        return code


def _syntax_error(code: str) -> str | None:
    """None when ``code`` parses (``ast``, about 25 times LibCST's speed), else where and why it does not."""
    try:
        compile(code, "<converted>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=None)
def installed_ms_version() -> tuple[int, int]:
    """The installed MindSpore's (major, minor), read from package metadata (no import of mindspore)."""
    from importlib import metadata

    try:
        major, minor, *_ = metadata.version("mindspore").split(".")
        return int(major), int(minor)
    except (metadata.PackageNotFoundError, ValueError):
        return (2, 10)


def __getattr__(name: str):
    if name in ("convert_path", "ConversionReport"):
        from mindport.migrator import repo

        return getattr(repo, name)
    raise AttributeError(name)


def _own_fact(fact, code: str) -> bool:
    """A project fact (``mindport.migrator.project``) of one file converted alone (its own project); no when the file
    does not parse."""
    try:
        return fact([ast.parse(code)])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _own_return_kinds(code: str) -> tuple:
    """What the functions of one file return (``project.return_kinds``): a file converted alone is its project."""
    try:
        return return_kinds([ast.parse(code)])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
