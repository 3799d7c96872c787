"""Whole repositories: mirror SRC into OUT, converting Python files and notebooks, adapting requirement files,
copying everything else verbatim. Encodings, BOMs and line endings are kept; bad files get one diagnostic each and
are copied unchanged; nothing is written into SRC unless ``in_place``; every write is atomic.

Trust: every file is converted on its own, in a supervised worker process, so one file that crashes the converter,
nests too deeply, eats memory or runs past the time limit costs that file only (one MP299 line, the file copied
unchanged). The tree is walked without following symlinks out of it; FIFOs and devices are never opened; what
cannot be read is reported (docs/diagnostics.md, MP204-MP208).

A content-hash cache (``OUT/.mindport-cache.json``) makes a re-run on an unchanged tree cheap: a file whose source,
options and mapping tables are unchanged, and whose output is still there, is not converted again.
"""
from __future__ import annotations

import ast
import codecs
import contextlib
import difflib
import errno
import functools
import hashlib
import io
import itertools
import json
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import pickle
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from mindport import __version__
from mindport.errors import Diagnostic, InputError
from mindport.migrator.rules.module_class import module_classes

CACHE_NAME = ".mindport-cache.json"
DEFAULT_TIMEOUT = 120.0  # seconds per file; LibCST converts about 60 kB/s on one core
# bytes per file: LibCST holds several hundred times a file's size in memory while it converts it (a 1 MB file
# peaks near 0.85 GB), so a generated 5 MB file would need about 4 GB; bigger files are copied unchanged (MP204)
DEFAULT_MAX_FILE_SIZE = 1_000_000
_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".tox",
              ".ipynb_checkpoints", "node_modules"}
_REQUIREMENT_FILE = re.compile(r"^requirements.*\.(txt|in)$")
_TORCH_REQUIREMENT = re.compile(r"^(\s*)(torch)(\s*(?:[<>=!~].*)?)$", re.IGNORECASE)
_DROPPED_REQUIREMENTS = ("torchvision", "torchaudio", "torchtext")


@dataclass
class FileReport:
    path: str  # relative to SRC
    # converted | unchanged (copied byte for byte: nothing to convert) | copied (not Python) | cached | linked (an
    # in-tree symlink, mirrored as a link) | failed (copied unchanged, see the diagnostic) | skipped (not mirrored)
    status: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    lines: int = 0
    sites: int = 0
    diff: str = ""

    def to_json(self) -> dict:
        return {"path": self.path, "status": self.status, "lines": self.lines, "converted_sites": self.sites,
                "diagnostics": [d.to_json() for d in self.diagnostics]}


@dataclass
class ConversionReport:
    src: str
    dst: str
    files: list[FileReport] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]

    @property
    def unconverted(self) -> list[Diagnostic]:
        """Every site left as it was, file not converted or not mirrored (errors and warnings; info is not)."""
        return [d for d in self.diagnostics if d.severity in ("error", "warning")]

    @property
    def ok(self) -> bool:
        return not self.unconverted

    def totals(self) -> dict:
        counts: dict[str, int] = {}
        for f in self.files:
            counts[f.status] = counts.get(f.status, 0) + 1
        unsupported: dict[str, int] = {}
        for d in self.diagnostics:
            if d.api:
                unsupported[d.api] = unsupported.get(d.api, 0) + 1
        return {
            "files": len(self.files), "by_status": counts,
            "python_lines": sum(f.lines for f in self.files),
            "sites_converted": sum(f.sites for f in self.files),
            "sites_unconverted": len(self.unconverted),
            "top_unsupported": sorted(unsupported.items(), key=lambda kv: (-kv[1], kv[0]))[:10],
        }

    def to_json(self) -> dict:
        return {"tool": "mindport", "version": __version__, "src": self.src, "dst": self.dst,
                "ok": self.ok, "totals": self.totals(), "files": [f.to_json() for f in self.files]}


# ------------------------------------------------------------------------------------------------- one file

def decode_source(data: bytes, name: str) -> tuple[str | None, str, bool, Diagnostic | None]:
    """(text, encoding, has_bom, problem). Honours BOMs and ``# -*- coding: … -*-`` lines (PEP 263)."""
    if b"\x00" in data:
        return None, "", False, Diagnostic("MP203", "binary file (NUL bytes): copied unchanged", name, 1, 1)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return None, "", False, Diagnostic("MP202", f"unknown source encoding: {exc}", name, 1, 1,
                                           "declare a valid `# -*- coding: … -*-` or save the file as UTF-8")
    has_bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8-sig" if has_bom else encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, encoding, has_bom, Diagnostic(
            "MP202", f"cannot decode as {encoding}: {exc.reason} at byte {exc.start}", name, line, 1,
            "save the file as UTF-8 or declare its encoding with a `# -*- coding: … -*-` line")
    return text, encoding, has_bom, None


def encode_source(text: str, encoding: str, has_bom: bool) -> bytes:
    data = text.encode("utf-8" if has_bom else encoding)
    return codecs.BOM_UTF8 + data if has_bom else data


def convert_python_bytes(data: bytes, name: str, options: dict) -> tuple[bytes, list[Diagnostic], int, int, bool]:
    """(output bytes, diagnostics, lines, converted sites, changed)."""
    return _convert_python(data, name, options)[:5]


def _convert_python(data: bytes, name: str, options: dict):
    """``convert_python_bytes`` + the ConversionResult (None when the bytes could not be decoded)."""
    from mindport.migrator import convert_source

    text, encoding, has_bom, problem = decode_source(data, name)
    if problem is not None:
        return data, [problem], 0, 0, False, None
    result = convert_source(text, name, **options)  # libcst keeps CRLF, also on the lines it writes
    return encode_source(result.code, encoding, has_bom), result.diagnostics, text.count("\n") + 1, \
        result.converted_sites, result.changed, result


def convert_notebook_bytes(data: bytes, name: str, options: dict, max_code_size: int | None = None
                           ) -> tuple[bytes, list[Diagnostic], int, int, bool]:
    """Convert the code cells of a notebook; the JSON stays valid and keeps its other content. ``max_code_size``
    limits the code of all cells together (outputs such as images do not count)."""
    from mindport.migrator import convert_source

    try:
        notebook = json.loads(data.decode("utf-8"))
        cells = notebook["cells"]
        code_size = sum(len("".join(c.get("source", ""))) for c in cells if c.get("cell_type") == "code")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        return data, [Diagnostic("MP202", f"not a readable notebook: {exc}", name, 1, 1)], 0, 0, False
    if max_code_size is not None and code_size > max_code_size:
        return data, [_too_large(code_size, max_code_size).diagnostic(name)], 0, 0, False
    diagnostics: list[Diagnostic] = []
    lines = sites = 0
    changed = False
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        # IPython magics and shell escapes are not Python: keep them out of the parser.
        kept = [(i, line) for i, line in enumerate(text.split("\n")) if line.lstrip().startswith(("%", "!"))]
        body = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n"))
        result = convert_source(body, f"{name}[cell {index}]", **options)
        out_lines = result.code.split("\n")
        for i, line in kept:
            if i < len(out_lines):
                out_lines[i] = line
        new_text = "\n".join(out_lines)
        diagnostics.extend(result.diagnostics)
        lines += text.count("\n") + 1
        sites += result.converted_sites
        if new_text != text:
            changed = True
            cell["source"] = new_text.splitlines(keepends=True) if isinstance(source, list) else new_text
    out = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    return out.encode("utf-8"), diagnostics, lines, sites, changed


def convert_requirements_text(text: str) -> str:
    """torch -> mindspore in a requirements file; torchvision/torchaudio/torchtext commented out with a reason."""
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        name = re.split(r"[\s<>=!~\[;]", stripped, maxsplit=1)[0].lower() if stripped else ""
        ending = "\n" if line.endswith("\n") else ""
        if name == "torch":
            out.append("mindspore==2.10.*" + ending)
        elif name in _DROPPED_REQUIREMENTS:
            out.append(f"# {stripped}  # mindport: no MindSpore package; use mindspore.dataset" + ending)
        else:
            out.append(line)
    return "".join(out)


def convert_pyproject_text(text: str) -> str:
    """The same for the dependency strings of a pyproject.toml (quoted requirement specifiers)."""
    def replace(match: re.Match) -> str:
        quote, spec = match.group(1), match.group(2)
        name = re.split(r"[\s<>=!~\[;]", spec, maxsplit=1)[0].lower()
        if name == "torch":
            return f"{quote}mindspore==2.10.*{quote}"
        return match.group(0)

    return re.sub(r"""(["'])(torch(?:[\s<>=!~\[;][^"']*)?)\1""", replace, text)


class _Converted(NamedTuple):
    rel: str
    status: str
    diagnostics: list
    lines: int
    sites: int
    output: bytes | None
    class_bases: dict | None = None  # Python files: every class's bases (for the project's module classes)
    class_names: frozenset = frozenset()  # Python files: the names of the classes that were nn.Module subclasses
    summary: tuple | None = None  # Python files: idioms.class_summary


def _convert_one(job: tuple) -> _Converted:
    """Worker: (relative path, source path, kind, conversion options, settings) -> the converted file.

    Any failure, whatever it is, costs this file only: it becomes one MP299 (or MP2xx) diagnostic and the file is
    copied unchanged. ``settings``: ``mappings`` (overlay files), ``max_size`` (bytes)."""
    rel, src_path, kind, options, settings = job
    try:
        from mindport.mappings import use_overlays

        use_overlays(settings.get("mappings", ()))
        data = read_regular(Path(src_path), settings.get("max_size") if kind == "python" else None)
    except _ReadError as exc:
        return _Converted(rel, "failed", [exc.diagnostic(rel)], 0, 0, None, {})
    except Exception as exc:  # noqa: BLE001 - an overlay that no longer loads, and the like
        return _failed(rel, *_describe(exc))
    try:
        return _convert_data(rel, data, kind, options, settings.get("max_size"))
    except Exception as exc:  # noqa: BLE001 - a converter bug must not lose the file: copy it and say so
        return _failed(rel, *_describe(exc))


def _convert_data(rel: str, data: bytes, kind: str, options: dict, max_size: int | None = None) -> _Converted:
    result = None
    if kind == "python":
        out, diags, lines, sites, changed, result = _convert_python(data, rel, options)
    elif kind == "notebook":
        out, diags, lines, sites, changed = convert_notebook_bytes(data, rel, options, max_size)
    elif kind == "requirements":
        out = convert_requirements_text(data.decode("utf-8", "replace")).encode("utf-8")
        diags, lines, sites, changed = [], 0, 0, out != data
    elif kind == "pyproject":
        out = convert_pyproject_text(data.decode("utf-8", "replace")).encode("utf-8")
        diags, lines, sites, changed = [], 0, 0, out != data
    else:
        return _Converted(rel, "copied", [], 0, 0, None)
    extra = {}
    if kind == "python":
        bases = class_bases(data)
        summary = result.class_summary if result is not None else None
        extra = {"class_bases": bases, "summary": summary,
                 "class_names": frozenset(module_classes(summary or (), options["module_classes"]) & set(bases))}
    if any(d.code in ("MP201", "MP202", "MP203", "MP204") for d in diags):
        return _Converted(rel, "failed", diags, lines, sites, None, **extra)
    if not changed:
        out = None  # nothing to convert: the file is copied, byte for byte
    return _Converted(rel, "converted" if changed else "unchanged", diags, lines, sites, out, **extra)


_REPORT = f"the file was copied unchanged; please report it (mindport {__version__})"
_COPIED = "the file was copied unchanged"


def _describe(exc: BaseException) -> tuple[str, str]:
    """(message, fix) for a failure; never raises (an exception's own ``__str__`` may)."""
    if isinstance(exc, RecursionError):
        return ("the code nests too deeply for the converter (RecursionError)",
                f"{_COPIED}; split the deepest expression or block")
    if isinstance(exc, MemoryError):
        return ("the converter ran out of memory on this file (MemoryError)",
                f"{_COPIED}; split the file or give the converter more memory")
    try:
        text = str(exc).strip()
        text = text.splitlines()[0][:300] if text else ""
    except Exception:  # noqa: BLE001
        text = ""
    return f"internal error while converting: {type(exc).__name__}" + (f": {text}" if text else ""), _REPORT


def _failed(rel: str, message: str, suggestion: str = _REPORT) -> _Converted:
    """A file the converter could not finish: one MP299 line, the file copied unchanged."""
    return _Converted(rel, "failed", [Diagnostic("MP299", message, rel, 1, 1, suggestion)], 0, 0, None, {})


def _kind(path: Path) -> str:
    if path.suffix == ".py":
        return "python"
    if path.suffix == ".ipynb":
        return "notebook"
    if _REQUIREMENT_FILE.match(path.name):
        return "requirements"
    if path.name == "pyproject.toml":
        return "pyproject"
    return "copy"


# ------------------------------------------------------------------------------------------ reading safely

class _ReadError(Exception):
    """A file that cannot be read as a regular file (the reason as a diagnostic)."""

    def __init__(self, code: str, message: str, suggestion: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.suggestion = code, message, suggestion

    def diagnostic(self, rel: str) -> Diagnostic:
        return Diagnostic(self.code, self.message, rel, 1, 1, self.suggestion)


def _too_large(size: int, limit: int) -> _ReadError:
    return _ReadError("MP204", f"{size / 1e6:.1f} MB is over the size limit of {limit / 1e6:.1f} MB: copied "
                               "unchanged (LibCST needs several hundred times a file's size in memory)",
                      "split the file, or raise the limit with --max-file-size")


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file, never following a symlink and never blocking on a FIFO or device (opened
    non-blocking, checked with fstat before any read). Raises _ReadError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _ReadError("MP207", f"cannot read: {exc.strerror or exc}: not converted, not copied",
                         "make it readable and run again") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _ReadError("MP206", f"not a regular file ({_file_type(info.st_mode)}): skipped, never opened")
        if limit is not None and info.st_size > limit:
            raise _too_large(info.st_size, limit)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise _ReadError("MP207", f"cannot read: {exc.strerror or exc}: not converted, not copied",
                         "make it readable and run again") from None
    finally:
        os.close(fd)


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return name
    return "not a regular file"


# ------------------------------------------------------------------------------------------ walking the tree

class TreeEntry(NamedTuple):
    rel: str  # relative to SRC, with /
    path: Path
    kind: str  # python | notebook | requirements | pyproject | copy | link
    size: int = 0
    link: str = ""  # kind "link": the link text to write in OUT (relative, inside the tree)


def walk_tree(src: Path, exclude: tuple[str, ...] = ()) -> tuple[list[TreeEntry], list[FileReport]]:
    """Every file below ``src``, without following symlinks: (entries, problems).

    A symlink whose target lies inside the tree is mirrored as a link (a folder link is not walked, so there are
    no loops); one that points outside the tree, dangles or loops is reported and not followed. FIFOs, sockets and
    devices are reported and never opened. Unreadable folders and entries are reported. Nothing is silent except
    the folders of tools (.git, __pycache__, virtualenvs ...) and --exclude."""
    root = Path(os.path.realpath(src))
    entries: list[TreeEntry] = []
    problems: list[FileReport] = []

    def problem(rel: str, code: str, message: str, suggestion: str = "") -> None:
        problems.append(FileReport(rel, "skipped", [Diagnostic(code, message, rel, 1, 1, suggestion)]))

    stack = [""]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(root / folder if folder else root) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problem(folder or ".", "MP207", f"cannot read this folder: {exc.strerror or exc}: its files were not "
                                            "converted or copied", "make it readable and run again")
            continue
        subfolders = []
        for item in items:
            rel = f"{folder}/{item.name}" if folder else item.name
            if item.name == CACHE_NAME or _excluded(rel, exclude):
                continue
            try:
                info = item.stat(follow_symlinks=False)
            except OSError as exc:
                problem(rel, "MP207", f"cannot read: {exc.strerror or exc}", "make it readable and run again")
                continue
            path = Path(item.path)
            if stat.S_ISLNK(info.st_mode):
                link = _classify_link(root, path, rel)
                if isinstance(link, Diagnostic):
                    problems.append(FileReport(rel, "skipped", [link]))
                else:
                    entries.append(TreeEntry(rel, path, "link", 0, link))
            elif stat.S_ISDIR(info.st_mode):
                if item.name not in _SKIP_DIRS:
                    subfolders.append(rel)
            elif stat.S_ISREG(info.st_mode):
                entries.append(TreeEntry(rel, path, _kind(path), info.st_size))
            else:
                problem(rel, "MP206", f"not a regular file ({_file_type(info.st_mode)}): skipped, never opened")
        stack.extend(reversed(subfolders))
    entries.sort(key=lambda e: e.rel)
    return entries, problems


def _excluded(rel: str, exclude: tuple[str, ...]) -> bool:
    return any(Path(rel).match(p) or rel.startswith(p.rstrip("/") + "/") or rel == p.rstrip("/") for p in exclude)


def _classify_link(root: Path, path: Path, rel: str) -> str | Diagnostic:
    """The text of an in-tree link as OUT will hold it, or the diagnostic of a link mindport does not follow."""
    try:
        text = os.readlink(path)
    except OSError as exc:
        return Diagnostic("MP207", f"cannot read the symlink: {exc.strerror or exc}", rel, 1, 1)
    try:
        os.stat(path)  # follows: dangling links and loops fail here
    except OSError as exc:
        what = "a symlink loop" if exc.errno == errno.ELOOP else "a dangling symlink" \
            if exc.errno == errno.ENOENT else f"an unusable symlink ({exc.strerror})"
        return Diagnostic("MP205", f"{what} (-> {text}): not followed, not copied", rel, 1, 1,
                          "fix or remove the link")
    target = Path(os.path.realpath(path))
    if target != root and root not in target.parents:
        return Diagnostic("MP205", f"a symlink to {target}, outside the source tree: not followed, not copied",
                          rel, 1, 1, "copy what it points to into the tree if the port needs it")
    return os.path.relpath(target, os.path.realpath(path.parent))


# ------------------------------------------------------------------------------------------ the whole tree

def class_bases(data: bytes | str) -> dict[str, list[str]]:
    """Class name -> the last component of each base, for every class of one file, nested ones too (``ast``: cheap,
    nothing imported)."""
    try:
        tree = ast.parse(data)
        return {node.name: [_last_component(b) for b in node.bases] for node in _statements(tree.body)
                if type(node) is ast.ClassDef}
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # deeper than Python's parser allows: none
        return {}


def _statements(body):
    """Every statement in a block, nested blocks included, in source order (no expression is walked)."""
    for stmt in body:
        yield stmt
        for part in ("body", "orelse", "finalbody"):
            child = getattr(stmt, part, None)
            if isinstance(child, list):
                yield from _statements(child)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from _statements(case.body)


def _last_component(base: ast.expr) -> str:
    if type(base) is ast.Name:
        return base.id
    if type(base) is ast.Attribute:
        return base.attr
    return ast.unparse(base).rsplit(".", 1)[-1]


def local_packages(src: Path, files) -> frozenset[str]:
    """The top-level packages and modules of a tree (``timm`` when converting timm itself): imports of them are the
    project's own code, even when a torch-based package of that name exists."""
    if not src.is_dir():
        return frozenset()
    names = set()
    for path in files:
        if path.suffix == ".py":
            parts = path.relative_to(src).parts
            names.add(parts[0] if len(parts) > 1 else path.stem)
    return frozenset(names)


def star_bindings(src: Path, python: list[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """The torch names each file receives through ``from <project module> import *`` (failure class 5: ``from
    .layers import *`` brings the torch ``nn``, ``F`` and ``torch`` that ``layers.py`` imports): {file: ((name,
    torch name), ...)}, for the files that have some. Python's rule: the star gives the module's ``__all__``, or its
    names without a leading underscore, its own star imports included. Read with ``ast`` from the files that contain
    ``import *`` and the modules they name (nothing is imported); imports bind names as ``mindport.names`` says."""
    from mindport.names import Scope, bind_from, bind_module, is_torch

    modules: dict[str, str] = {}
    for rel in python:
        parts = rel[:-3].split("/")
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = rel
    cache: dict[str, dict[str, str | None]] = {}
    parsed: dict[str, tuple[list, bool]] = {}

    def statements(rel: str):
        if rel not in parsed:
            try:
                tree = ast.parse((src / rel).read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                tree = ast.Module(body=[], type_ignores=[])
            body = []
            for stmt in tree.body:  # module level, also inside a top-level if/try (optional imports)
                body.append(stmt)
                for part in ("body", "orelse", "finalbody"):
                    if isinstance(stmt, (ast.If, ast.Try)):
                        body.extend(getattr(stmt, part, []))
                if isinstance(stmt, ast.Try):
                    for handler in stmt.handlers:
                        body.extend(handler.body)
            parsed[rel] = (body, rel.endswith("__init__.py"))
        return parsed[rel]

    def target(rel: str, node: ast.ImportFrom) -> str | None:
        module = modules_of[rel]
        if node.level:
            package = module.split(".") if parsed[rel][1] else module.split(".")[:-1]
            package = package[:len(package) - (node.level - 1)] if node.level > 1 else package
            name = ".".join([*package, *([node.module] if node.module else [])])
        else:
            name = node.module or ""
        if name in modules:
            return modules[name]
        matches = [r for m, r in modules.items() if m.endswith("." + name)]
        return matches[0] if len(matches) == 1 else None

    def names_of(rel: str, visiting: frozenset[str]) -> dict[str, str | None]:
        """The names a module binds at its top level: torch name, or None for anything else."""
        if rel in cache:
            return cache[rel]
        body, _ = statements(rel)
        scope = Scope()
        for stmt in body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    bind_module(scope, alias.name, alias.asname)
            elif isinstance(stmt, ast.ImportFrom):
                if any(a.name == "*" for a in stmt.names):
                    other = target(rel, stmt)
                    if other is not None and other not in visiting:
                        scope.names.update(exported(other, visiting | {rel}))
                    continue
                module = None if stmt.level else stmt.module
                for alias in stmt.names:
                    bind_from(scope, module, alias.name, alias.asname)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scope.names[stmt.name] = None
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for tgt in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                    for node in ast.walk(tgt):
                        if isinstance(node, ast.Name):
                            scope.names[node.id] = None
        cache[rel] = scope.names
        return scope.names

    def exported(rel: str, visiting: frozenset[str]) -> dict[str, str | None]:
        names = names_of(rel, visiting)
        body, _ = statements(rel)
        public = None
        for stmt in body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
                try:
                    public = set(ast.literal_eval(stmt.value))
                except (ValueError, SyntaxError, TypeError):
                    public = None
        return {n: q for n, q in names.items() if (n in public if public is not None else not n.startswith("_"))}

    modules_of = {rel: module for module, rel in modules.items()}
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for rel in python:
        try:
            if b"import *" not in (src / rel).read_bytes():
                continue
        except OSError:
            continue
        body, _ = statements(rel)
        received: dict[str, str | None] = {}
        for stmt in body:
            if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
                other = target(rel, stmt)
                if other is not None and other != rel:
                    received.update(exported(other, frozenset({rel})))
        torch_names = tuple(sorted((n, q) for n, q in received.items() if is_torch(q)))
        if torch_names:
            out[rel] = torch_names
    return out


def module_classes_from_bases(per_file: list[dict[str, list[str]]]) -> frozenset[str]:
    """Class names, across the project, that are nn.Module subclasses directly or through project-local bases."""
    bases: dict[str, set[str]] = {}
    for file_bases in per_file:
        for name, names in file_bases.items():
            bases.setdefault(name, set()).update(names)
    found = {name for name, bs in bases.items() if "Module" in bs}
    changed = True
    while changed:
        changed = False
        for name, bs in bases.items():
            if name not in found and bs & found:
                found.add(name)
                changed = True
    return frozenset(found)


def _tables_fingerprint(mappings: tuple = ()) -> str:
    import mindport.mappings as tables

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(tables.DATA_DIR.glob("*.toml")):
        digest.update(path.read_bytes())
    for package in (Path(__file__).parent, Path(tables.__file__).parent):  # the converter and its transforms
        for path in sorted(package.rglob("*.py")):
            digest.update(path.read_bytes())
    digest.update(tables.overlay_fingerprint(mappings).encode())
    return digest.hexdigest()


def _same_copy(src: Path, dst: Path) -> bool:
    """An earlier run's copy (copy2 keeps size and mtime) needs no copying again."""
    try:
        a, b = src.stat(), dst.lstat()
    except OSError:
        return False
    return stat.S_ISREG(b.st_mode) and a.st_size == b.st_size and int(a.st_mtime) == int(b.st_mtime)


TMP_SUFFIX = ".mindport-tmp"


@contextlib.contextmanager
def _temp_beside(path: Path):
    """A fresh, uniquely named temporary path in ``path``'s folder, renamed over ``path`` by the caller, removed if
    anything (an error, Ctrl-C) happens first. Concurrent runs never share a temporary name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write(path: Path, data: bytes, mode_from: Path | None = None) -> None:
    """Write ``path`` all at once: readers (and a concurrent run) see the old file or the new one, never a part."""
    path = Path(path)
    with _temp_beside(path) as tmp:
        tmp.write_bytes(data)
        if mode_from is not None:
            shutil.copymode(mode_from, tmp)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)


def _atomic_copy(src: Path, dst: Path) -> None:
    with _temp_beside(dst) as tmp:
        shutil.copy2(src, tmp, follow_symlinks=False)
        os.replace(tmp, dst)


def _atomic_link(text: str, dst: Path) -> None:
    if dst.is_symlink() and os.readlink(dst) == text:
        return
    with _temp_beside(dst) as tmp:
        tmp.unlink()
        os.symlink(text, tmp)
        os.replace(tmp, dst)


@functools.lru_cache(maxsize=1)
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _git_dirty(path: Path) -> bool | None:
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=path, capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return bool(out.stdout.strip())


def _digest(path: Path) -> str:
    """sha256 of a regular file (never opens a FIFO or follows a link; raises _ReadError)."""
    return hashlib.sha256(read_regular(path)).hexdigest()


def _ours(entry: os.DirEntry | Path) -> bool:
    """Files mindport itself puts in OUT first (the cache, and temporaries of a run still writing)."""
    return entry.name == CACHE_NAME or entry.name.endswith(TMP_SUFFIX)


def convert_path(src, dst=None, *, target: str = "nn", ms_version: tuple[int, int] | None = None, jobs: int | None = None,
                 exclude: tuple[str, ...] = (), in_place: bool = False, backup: bool = True, diff: bool = False,
                 force: bool = False, use_cache: bool = True, progress=None, timeout: float | None = DEFAULT_TIMEOUT,
                 max_file_size: int | None = DEFAULT_MAX_FILE_SIZE, mappings=()) -> ConversionReport:
    """Convert a file or a directory tree into ``dst`` (or in place, or only a diff). Raises InputError for
    unusable arguments.

    Every file is converted on its own, in a worker process: a failure, a crash or a file over ``timeout``
    seconds costs that file only (one MP299 line, the file copied unchanged). Files over ``max_file_size``
    bytes are copied unchanged with MP204. ``mappings``: the user's overlay tables (their paths), on top of the
    bundled ones. ``progress(rel, done, total)`` is called once per file of the tree."""
    from mindport.mappings import MappingError, overlays

    src = Path(src)
    if not src.exists():
        raise InputError(f"{src} does not exist" + (" (a dangling symlink)" if src.is_symlink() else ""))
    single = not src.is_dir()
    if single and not src.is_file():
        raise InputError(f"{src} is not a regular file or a folder ({_file_type(os.stat(src).st_mode)})")
    if in_place:
        if not single and _git_dirty(src) and not backup:
            raise InputError(f"{src} has uncommitted changes: commit them first, or let mindport write .orig backups")
        dst_path = src
    elif diff:
        dst_path = Path(dst) if dst is not None else src  # nothing is written
    else:
        if dst is None:
            raise InputError("give an output path (-o OUT), --in-place or --diff")
        dst_path = Path(dst)
        if not single:
            if dst_path.resolve() == src.resolve() or src.resolve() in dst_path.resolve().parents:
                raise InputError(f"the output {dst_path} is inside the source {src}: choose a folder outside it")
            if dst_path.exists() and not force and not (dst_path / CACHE_NAME).exists() \
                    and any(not _ours(e) for e in dst_path.iterdir()):
                raise InputError(f"{dst_path} exists and was not written by mindport: choose an empty folder, "
                                 "or pass --force to write into it")
        elif dst_path.is_dir():
            dst_path = dst_path / src.name
    if single:
        try:
            size = os.stat(src).st_size
            if max_file_size is None or size <= max_file_size:
                read_regular(Path(os.path.realpath(src)))  # unreadable: an input error, before anything is written
        except _ReadError as exc:
            raise InputError(f"{src}: {exc.message}") from None
        real = Path(os.path.realpath(src))
        entries, problems = [TreeEntry(src.name, real, _kind(src), size)], []
    else:
        entries, problems = walk_tree(src, tuple(exclude))
    try:
        with overlays(tuple(mappings)):
            return _convert_entries(src, dst_path, entries, problems, single=single, target=target,
                                    ms_version=ms_version, jobs=jobs, in_place=in_place, backup=backup, diff=diff,
                                    use_cache=use_cache, progress=progress, timeout=timeout,
                                    max_file_size=max_file_size, mappings=tuple(str(p) for p in mappings))
    except MappingError as exc:
        raise InputError(str(exc)) from None


def _convert_entries(src: Path, dst_path: Path, entries: list[TreeEntry], problems: list[FileReport], *, single: bool,
                     target, ms_version, jobs, in_place, backup, diff, use_cache, progress, timeout, max_file_size,
                     mappings) -> ConversionReport:
    writes = not diff
    cache_path = (dst_path.parent if single else dst_path) / CACHE_NAME
    if writes and not in_place and not single and not cache_path.exists():
        # The mark of a folder mindport writes, first of all: a concurrent run into the same OUT sees it.
        atomic_write(cache_path, json.dumps({"fingerprint": None, "files": {}}).encode())
    cache_json: dict = {}
    if use_cache and writes and not in_place and cache_path.is_file():
        try:
            cache_json = json.loads(cache_path.read_text())
        except (OSError, ValueError):
            cache_json = {}
    old_cache: dict = cache_json.get("files", {}) if isinstance(cache_json, dict) else {}
    report = ConversionReport(str(src), str(dst_path))
    report.files.extend(problems)
    total, counted = len(entries), set()

    def tick(rel: str) -> None:
        if progress and rel not in counted:
            counted.add(rel)
            progress(rel, len(counted), total)

    # One read and one hash per source file; class bases come from the cache for unchanged files.
    digests: dict[str, str] = {}
    bases: dict[str, dict] = {}
    unread: dict[str, str] = {}  # rel -> path of the Python files whose class bases are not cached
    todo: list[TreeEntry] = []
    for entry in entries:
        if entry.kind in ("copy", "link"):
            todo.append(entry)
            continue
        if entry.kind == "python" and max_file_size is not None and entry.size > max_file_size:
            report.files.append(FileReport(entry.rel, "failed", [_too_large(entry.size, max_file_size)
                                                                 .diagnostic(entry.rel)]))
            if writes and not in_place:
                _write_one(report.files[-1], entry, None, dst_path, single, in_place, backup)
            tick(entry.rel)
            continue
        try:
            digests[entry.rel] = _digest(entry.path)
        except _ReadError as exc:
            report.files.append(FileReport(entry.rel, "skipped", [exc.diagnostic(entry.rel)]))
            tick(entry.rel)
            continue
        todo.append(entry)
        hit = old_cache.get(entry.rel)
        if entry.kind == "python":
            if hit and hit.get("sha256") == digests[entry.rel] and "class_bases" in hit:
                bases[entry.rel] = hit["class_bases"]
            else:
                unread[entry.rel] = str(entry.path)
    settings = {"mappings": mappings, "max_size": max_file_size}
    workers = _Workers(jobs, timeout)
    try:
        # The project's module classes (nn.Module subclasses through bases in other files) need every file's class
        # bases first. The new and changed Python files are converted at once, as if no other file had any, and
        # give their bases back (one parse per file); the few whose classes the project's set changes are
        # converted again below.
        first: dict[str, _Converted] = {}
        local = local_packages(src, [src / entry.rel for entry in entries]) if not single else frozenset()
        stars = star_bindings(src, [r for r in sorted(digests) if r.endswith(".py")]) if not single else {}
        speculative = {"target": target, "ms_version": ms_version, "module_classes": frozenset(),
                       "local_packages": local}

        def for_file(rel: str, opts: dict) -> dict:  # a file's options: the torch names its star imports bring
            return {**opts, "star_bindings": stars[rel]} if rel in stars else opts

        for result in workers.map([(rel, path, "python", for_file(rel, speculative), settings)
                                   for rel, path in unread.items()]):
            first[result.rel] = result
            bases[result.rel] = result.class_bases or {}
            tick(result.rel)
        options = {"target": target, "ms_version": ms_version,
                   "module_classes": module_classes_from_bases(list(bases.values())), "local_packages": local}
        fingerprint = _tables_fingerprint(mappings) + json.dumps(
            {k: sorted(v) if isinstance(v, frozenset) else v for k, v in options.items()}, sort_keys=True)
        cache = old_cache if old_cache and cache_json.get("fingerprint") == fingerprint else {}
        jobs_list = []
        done: list[_Converted] = []
        new_cache = {"fingerprint": fingerprint, "files": {}}
        by_rel = {entry.rel: entry for entry in todo}
        for entry in todo:
            rel, out_path = entry.rel, dst_path if single else dst_path / entry.rel
            if entry.kind == "link":
                report.files.append(FileReport(rel, "linked"))
                if writes and not in_place:
                    _write_one(report.files[-1], entry, None, dst_path, single, in_place, backup)
                tick(rel)
                continue
            if entry.kind == "copy":
                report.files.append(FileReport(rel, "copied"))
                if writes and not in_place and not _same_copy(entry.path, out_path):
                    _write_one(report.files[-1], entry, None, dst_path, single, in_place, backup)
                tick(rel)
                continue
            converted = first.get(rel)
            if converted is not None:
                names = set(converted.class_bases or ())
                if converted.summary is None or converted.class_names == \
                        module_classes(converted.summary, options["module_classes"]) & names:
                    done.append(converted)  # the project's module classes change nothing in this file
                else:
                    jobs_list.append((rel, str(entry.path), entry.kind, for_file(rel, options), settings))
                continue
            hit = cache.get(rel)
            if hit and hit["sha256"] == digests[rel] and writes and not in_place and out_path.is_file() \
                    and hit.get("star", []) == [list(b) for b in stars.get(rel, ())]:
                new_cache["files"][rel] = hit
                report.files.append(FileReport(rel, "cached", [Diagnostic(**d) for d in hit["diagnostics"]],
                                               hit["lines"], hit["sites"]))
                tick(rel)
                continue
            jobs_list.append((rel, str(entry.path), entry.kind, for_file(rel, options), settings))

        for result in itertools.chain(done, workers.map(jobs_list)):
            tick(result.rel)
            entry = by_rel[result.rel]
            file_report = FileReport(result.rel, result.status, result.diagnostics, result.lines, result.sites)
            report.files.append(file_report)
            if diff:
                if result.output is not None:
                    before = entry.path.read_bytes().decode(errors="replace").splitlines(keepends=True)
                    after = result.output.decode(errors="replace").splitlines(keepends=True)
                    file_report.diff = "".join(difflib.unified_diff(before, after, f"a/{result.rel}",
                                                                    f"b/{result.rel}"))
                continue
            if not _write_one(file_report, entry, result.output, dst_path, single, in_place, backup):
                continue
            if result.status in ("converted", "unchanged") or any(d.code == "MP201" for d in result.diagnostics):
                new_cache["files"][result.rel] = {
                    "sha256": digests[result.rel], "lines": result.lines, "sites": result.sites,
                    "diagnostics": [d.to_json() for d in result.diagnostics]}
                if result.rel in bases:
                    new_cache["files"][result.rel]["class_bases"] = bases[result.rel]
                if result.rel in stars:
                    new_cache["files"][result.rel]["star"] = [list(b) for b in stars[result.rel]]
        report.files.sort(key=lambda f: f.path)
        if writes and not in_place and use_cache:
            atomic_write(cache_path, json.dumps(new_cache).encode())
        return report
    finally:
        workers.close()


def _write_one(file_report: FileReport, entry: TreeEntry, output: bytes | None, dst_path: Path, single: bool,
               in_place: bool, backup: bool) -> bool:
    """Write one file of OUT (or rewrite it in place); an OS error becomes the file's MP208 line."""
    out_path = dst_path if single else dst_path / entry.rel
    try:
        if in_place:
            if output is not None:
                if backup:
                    _atomic_copy(entry.path, entry.path.with_name(entry.path.name + ".orig"))
                atomic_write(entry.path, output, mode_from=entry.path)
        elif entry.kind == "link":
            _atomic_link(entry.link, out_path)
        elif output is None:
            _atomic_copy(entry.path, out_path)
        else:
            atomic_write(out_path, output, mode_from=entry.path)
    except OSError as exc:
        file_report.status = "failed"
        file_report.diagnostics.append(Diagnostic("MP208", f"cannot write {out_path}: {exc.strerror or exc}",
                                                  entry.rel, 1, 1, "check the output folder and run again"))
        return False
    return True


# ------------------------------------------------------------------------------------------ worker processes

class _Worker:
    def __init__(self, context) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.job = None  # (index, job) being converted
        self.started = 0.0

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.join(5)
        with contextlib.suppress(Exception):
            self.conn.close()


class _Workers:
    """Worker processes converting one file at a time each, supervised by the parent: a worker that crashes (a
    segfault in native code, the kernel's OOM killer) or runs past the per-file time limit is killed and replaced,
    and its file gets one MP299 line; the run goes on. Started on first use, shared by the run's two passes.

    Workers ignore SIGINT (the parent stops them), run the converter on a thread with a large stack and a high
    recursion limit (deeply nested expressions convert instead of failing), and exit when the parent goes away."""

    def __init__(self, jobs: int | None, timeout: float | None) -> None:
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.timeout = timeout if timeout and timeout > 0 else None
        self._idle: list[_Worker] = []
        self._started: list[_Worker] = []
        self._context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")

    def _start(self) -> _Worker:
        worker = _Worker(self._context)
        self._started.append(worker)
        return worker

    def map(self, jobs_list: list):
        """Yield ``_convert_one(job)`` for every job, in the order they finish."""
        if not jobs_list:
            return
        from mindport.mappings import load_registry

        load_registry()  # loaded once here, inherited by forked workers
        pending = list(reversed(list(enumerate(jobs_list))))
        busy: list[_Worker] = []
        try:
            while pending or busy:
                while pending and len(busy) < self.jobs:
                    worker = self._idle.pop() if self._idle else self._start()
                    worker.job = pending.pop()
                    worker.started = time.monotonic()
                    try:
                        worker.conn.send(worker.job)
                    except (OSError, ValueError):  # the worker died while idle: start another for this job
                        pending.append(worker.job)
                        worker.stop()
                        continue
                    busy.append(worker)
                wait_for = None
                if self.timeout is not None:
                    wait_for = max(0.0, min(w.started + self.timeout for w in busy) - time.monotonic())
                ready = set(mp_connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy], wait_for))
                for worker in list(busy):
                    result = None
                    if worker.conn in ready:
                        try:
                            index, result = worker.conn.recv()
                        except (EOFError, OSError):
                            result = None
                    if result is not None:
                        busy.remove(worker)
                        worker.job = None
                        self._idle.append(worker)
                        yield result
                    elif worker.conn in ready or worker.process.sentinel in ready:
                        busy.remove(worker)
                        worker.stop()
                        yield _failed(worker.job[1][0], *_died(worker.process.exitcode))
                    elif self.timeout is not None and time.monotonic() - worker.started >= self.timeout:
                        busy.remove(worker)
                        worker.stop()
                        yield _failed(worker.job[1][0], f"conversion took longer than the per-file time limit of "
                                                        f"{self.timeout:g} s: stopped",
                                      f"{_COPIED}; raise the limit with --timeout, or split the file")
        finally:
            for worker in busy:  # an interrupted run (Ctrl-C) or a consumer that stopped early
                worker.stop()

    def close(self) -> None:
        """Stop every worker: idle ones are told to exit, any still converting (Ctrl-C) are killed."""
        for worker in self._idle:
            with contextlib.suppress(Exception):
                worker.conn.send(None)
        for worker in self._started:
            if worker in self._idle:
                worker.process.join(2)
            worker.stop()
        self._idle, self._started = [], []


def _died(exitcode: int | None) -> tuple[str, str]:
    """(message, fix) for a worker process that ended while converting a file."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        if name == "SIGKILL":
            return (f"the converter process was killed on this file ({name}, most likely out of memory)",
                    f"{_COPIED}; split the file or give the converter more memory")
        if name == "SIGABRT":  # what native code does when an allocation fails, among other things
            return (f"the converter process aborted on this file ({name} in native code: out of memory, or a bug)",
                    f"{_COPIED}; split the file or give the converter more memory, else please report it")
        return f"the converter process crashed on this file ({name}, in native code)", _REPORT
    return f"the converter process exited on this file (exit code {exitcode})", _REPORT


# Stack of the converting thread, and the recursion limit that stack carries safely (about 16 kB of stack per
# Python frame, counting the C frames of LibCST and the parsers). Virtual memory, touched only as deep as a file
# nests; under a tight address-space limit (ulimit -v) a smaller stack, with a lower limit, is used.
WORKER_STACKS = ((512 << 20, 30_000), (128 << 20, 7_000), (32 << 20, 1_500))


def _worker_main(conn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent handles it
    for size, limit in WORKER_STACKS:
        try:
            threading.stack_size(size)
            thread = threading.Thread(target=_serve, args=(conn, limit), name="mindport-convert")
            thread.start()
        except (RuntimeError, MemoryError, ValueError):
            continue
        thread.join()
        return
    _serve(conn, sys.getrecursionlimit())  # no room for a thread: the main thread, with its own stack


def _serve(conn, recursion_limit: int) -> None:
    sys.setrecursionlimit(recursion_limit)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the parent went away
        if message is None:
            return
        index, job = message
        result = _convert_one(job)
        try:
            conn.send((index, result))
        except (OSError, ValueError, TypeError, RecursionError, pickle.PicklingError) as exc:
            try:
                conn.send((index, _failed(job[0], *_describe(exc))))
            except (OSError, ValueError):
                return
