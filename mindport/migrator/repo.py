"""Whole repositories: mirror SRC into OUT, converting Python files and notebooks, adapting requirement files,
copying everything else verbatim. Encodings, BOMs and line endings are kept; bad files get one diagnostic each and
are copied unchanged; nothing is written into SRC unless ``in_place``; every write is atomic.

A content-hash cache (``OUT/.mindport-cache.json``) makes a re-run on an unchanged tree cheap: a file whose source,
options and mapping tables are unchanged, and whose output is still there, is not converted again.
"""
from __future__ import annotations

import ast
import codecs
import difflib
import hashlib
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import tokenize
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from mindport import __version__
from mindport.errors import Diagnostic, InputError
from mindport.migrator.rules.module_class import module_classes

CACHE_NAME = ".mindport-cache.json"
_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".tox",
              ".ipynb_checkpoints", "node_modules"}
_REQUIREMENT_FILE = re.compile(r"^requirements.*\.(txt|in)$")
_TORCH_REQUIREMENT = re.compile(r"^(\s*)(torch)(\s*(?:[<>=!~].*)?)$", re.IGNORECASE)
_DROPPED_REQUIREMENTS = ("torchvision", "torchaudio", "torchtext")


@dataclass
class FileReport:
    path: str  # relative to SRC
    status: str  # converted | unchanged | copied | cached | failed
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
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

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
            "sites_unconverted": len(self.diagnostics),
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


def convert_notebook_bytes(data: bytes, name: str, options: dict) -> tuple[bytes, list[Diagnostic], int, int, bool]:
    """Convert the code cells of a notebook; the JSON stays valid and keeps its other content."""
    from mindport.migrator import convert_source

    try:
        notebook = json.loads(data.decode("utf-8"))
        cells = notebook["cells"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        return data, [Diagnostic("MP202", f"not a readable notebook: {exc}", name, 1, 1)], 0, 0, False
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


def _convert_one(job: tuple[str, str, str, dict]) -> _Converted:
    """Worker: (relative path, source path, kind, options) -> the converted file."""
    rel, src_path, kind, options = job
    data = Path(src_path).read_bytes()
    result = None
    try:
        if kind == "python":
            out, diags, lines, sites, changed, result = _convert_python(data, rel, options)
        elif kind == "notebook":
            out, diags, lines, sites, changed = convert_notebook_bytes(data, rel, options)
        elif kind == "requirements":
            out = convert_requirements_text(data.decode("utf-8", "replace")).encode("utf-8")
            diags, lines, sites, changed = [], 0, 0, out != data
        elif kind == "pyproject":
            out = convert_pyproject_text(data.decode("utf-8", "replace")).encode("utf-8")
            diags, lines, sites, changed = [], 0, 0, out != data
        else:
            return _Converted(rel, "copied", [], 0, 0, None)
    except Exception as exc:  # a converter bug must not lose the file: copy it and say so
        diag = Diagnostic("MP299", f"internal error while converting: {type(exc).__name__}: {exc}", rel, 1, 1,
                          "please report this file; it was copied unchanged")
        return _Converted(rel, "failed", [diag], 0, 0, data, class_bases(data) if kind == "python" else None)
    extra = {}
    if kind == "python":
        bases = class_bases(data)
        summary = result.class_summary if result is not None else None
        extra = {"class_bases": bases, "summary": summary,
                 "class_names": frozenset(module_classes(summary or (), options["module_classes"]) & set(bases))}
    if any(d.code in ("MP201", "MP202", "MP203") for d in diags):
        return _Converted(rel, "failed", diags, lines, sites, data, **extra)
    return _Converted(rel, "converted" if changed else "unchanged", diags, lines, sites, out, **extra)


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


# ------------------------------------------------------------------------------------------ the whole tree

def class_bases(data: bytes | str) -> dict[str, list[str]]:
    """Class name -> the last component of each base, for every class of one file, nested ones too (``ast``: cheap,
    nothing imported)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    return {node.name: [_last_component(b) for b in node.bases] for node in _statements(tree.body)
            if type(node) is ast.ClassDef}


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


def _tables_fingerprint() -> str:
    from mindport.mappings import DATA_DIR

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(DATA_DIR.glob("*.toml")):
        digest.update(path.read_bytes())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _same_copy(src: Path, dst: Path) -> bool:
    """An earlier run's copy (copy2 keeps size and mtime) needs no copying again."""
    try:
        a, b = src.stat(), dst.stat()
    except OSError:
        return False
    return a.st_size == b.st_size and int(a.st_mtime) == int(b.st_mtime)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.mindport-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _git_dirty(path: Path) -> bool | None:
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=path, capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return bool(out.stdout.strip())


def collect_files(src: Path, exclude: tuple[str, ...] = ()) -> list[Path]:
    if src.is_file():
        return [src]
    files = []
    for root, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            path = Path(root) / name
            rel = path.relative_to(src).as_posix()
            if name == CACHE_NAME or any(Path(rel).match(p) or rel.startswith(p.rstrip("/") + "/") for p in exclude):
                continue
            files.append(path)
    return files


def convert_path(src, dst=None, *, target: str = "nn", ms_version: tuple[int, int] | None = None, jobs: int | None = None,
                 exclude: tuple[str, ...] = (), in_place: bool = False, backup: bool = True, diff: bool = False,
                 force: bool = False, use_cache: bool = True, progress=None) -> ConversionReport:
    """Convert a file or a directory tree into ``dst`` (or in place). Raises InputError for unusable arguments."""
    src = Path(src)
    if not src.exists():
        raise InputError(f"{src} does not exist")
    if in_place:
        if src.is_dir() and _git_dirty(src) and not backup:
            raise InputError(f"{src} has uncommitted changes: commit them first, or let mindport write .orig backups")
        dst_path = src
    else:
        if dst is None:
            raise InputError("give an output path (-o OUT), or --in-place")
        dst_path = Path(dst)
        if src.is_dir():
            if dst_path.resolve() == src.resolve() or src.resolve() in dst_path.resolve().parents:
                raise InputError(f"the output {dst_path} is inside the source {src}: choose a folder outside it")
            if not diff and dst_path.exists() and any(dst_path.iterdir()) \
                    and not (dst_path / CACHE_NAME).exists() and not force:
                raise InputError(f"{dst_path} exists and was not written by mindport: choose an empty folder, "
                                 "or pass --force to write into it")
        elif dst_path.is_dir():
            dst_path = dst_path / src.name
    files = collect_files(src, tuple(exclude))
    cache_path = (dst_path if src.is_dir() else dst_path.parent) / CACHE_NAME
    cache_json: dict = {}
    if use_cache and not diff and not in_place and cache_path.is_file():
        try:
            cache_json = json.loads(cache_path.read_text())
        except ValueError:
            cache_json = {}
    old_cache: dict = cache_json.get("files", {}) if isinstance(cache_json, dict) else {}
    # One read and one hash per source file; class bases come from the cache for unchanged files.
    digests: dict[str, str] = {}
    bases: dict[str, dict] = {}
    unread: dict[str, str] = {}  # rel -> path of the Python files whose class bases are not cached
    for path in files:
        if _kind(path) == "copy":
            continue
        rel = path.name if src.is_file() else path.relative_to(src).as_posix()
        data = path.read_bytes()
        digests[rel] = hashlib.sha256(data).hexdigest()
        hit = old_cache.get(rel)
        if path.suffix == ".py":
            if hit and hit.get("sha256") == digests[rel] and "class_bases" in hit:
                bases[rel] = hit["class_bases"]
            else:
                unread[rel] = str(path)
    workers = _Workers(jobs)
    try:
        # The project's module classes (nn.Module subclasses through bases in other files) need every file's class
        # bases first. The new and changed Python files are converted at once, as if no other file had any, and
        # give their bases back (one parse per file); the few whose classes the project's set changes are
        # converted again below.
        first = {rel: None for rel in unread}
        local = local_packages(src, files)
        stars = star_bindings(src, [r for r in sorted(digests) if r.endswith(".py")]) if src.is_dir() else {}
        speculative = {"target": target, "ms_version": ms_version, "module_classes": frozenset(),
                       "local_packages": local}

        def for_file(rel: str, opts: dict) -> dict:  # a file's options: the torch names its star imports bring
            return {**opts, "star_bindings": stars[rel]} if rel in stars else opts

        for result in workers.map(_convert_one, [(rel, path, "python", for_file(rel, speculative))
                                                 for rel, path in unread.items()], len(unread)):
            first[result.rel] = result
            bases[result.rel] = result.class_bases
            if progress:
                progress(result.rel)
        options = {"target": target, "ms_version": ms_version,
                   "module_classes": module_classes_from_bases(list(bases.values())), "local_packages": local}
        fingerprint = _tables_fingerprint() + json.dumps({k: sorted(v) if isinstance(v, frozenset) else v
                                                          for k, v in options.items()}, sort_keys=True)
        cache = old_cache if old_cache and cache_json.get("fingerprint") == fingerprint else {}
        report = ConversionReport(str(src), str(dst_path))
        jobs_list = []
        done: list[_Converted] = []
        new_cache = {"fingerprint": fingerprint, "files": {}}
        for path in files:
            rel = path.name if src.is_file() else path.relative_to(src).as_posix()
            kind = _kind(path)
            out_path = dst_path if src.is_file() else dst_path / rel
            if kind == "copy" and not diff and not in_place and _same_copy(path, out_path):
                report.files.append(FileReport(rel, "copied"))
                continue
            converted = first.get(rel)
            if converted is not None:
                names = set(converted.class_bases or ())
                if converted.summary is None or converted.class_names == \
                        module_classes(converted.summary, options["module_classes"]) & names:
                    done.append(converted)  # the project's module classes change nothing in this file
                else:
                    jobs_list.append((rel, str(path), kind, for_file(rel, options)))
                continue
            hit = cache.get(rel) if kind != "copy" else None
            if hit and hit["sha256"] == digests[rel] and out_path.is_file() \
                    and hit.get("star", []) == [list(b) for b in stars.get(rel, ())]:
                new_cache["files"][rel] = hit
                report.files.append(FileReport(rel, "cached", [Diagnostic(**d) for d in hit["diagnostics"]],
                                               hit["lines"], hit["sites"]))
                continue
            jobs_list.append((rel, str(path), kind, for_file(rel, options)))
        again = {job[0] for job in jobs_list if job[0] in first}

        def report_new(rel: str) -> None:  # a file converted again was counted in the progress already
            if progress and rel not in again:
                progress(rel)

        results = itertools.chain(done, _run_jobs(jobs_list, workers, report_new))
        for rel, status, diags, lines, sites, output, *_ in results:
            src_file = src if src.is_file() else src / rel
            out_path = dst_path if src.is_file() else dst_path / rel
            file_report = FileReport(rel, status, diags, lines, sites)
            if diff:
                if output is not None and status == "converted":
                    before = src_file.read_text(errors="replace").splitlines(keepends=True)
                    after = output.decode(errors="replace").splitlines(keepends=True)
                    file_report.diff = "".join(difflib.unified_diff(before, after, f"a/{rel}", f"b/{rel}"))
                report.files.append(file_report)
                continue
            if in_place:
                if output is not None and status == "converted":
                    if backup:
                        shutil.copy2(src_file, src_file.with_name(src_file.name + ".orig"))
                    _atomic_write(src_file, output)
            elif output is None:
                out_path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src_file, out_path)
            else:
                _atomic_write(out_path, output)
                shutil.copymode(src_file, out_path)
            if _kind(src_file) != "copy":
                new_cache["files"][rel] = {"sha256": digests[rel], "lines": lines, "sites": sites,
                                           "diagnostics": [d.to_json() for d in diags]}
                if rel in bases:
                    new_cache["files"][rel]["class_bases"] = bases[rel]
                if rel in stars:
                    new_cache["files"][rel]["star"] = [list(b) for b in stars[rel]]
            report.files.append(file_report)
        report.files.sort(key=lambda f: f.path)
        if not diff and not in_place and use_cache:
            _atomic_write(cache_path, json.dumps(new_cache).encode())
        return report
    finally:
        workers.close()


class _Workers:
    """Worker processes, started on first use and shared by the run's two passes (class bases, conversion)."""

    def __init__(self, jobs: int | None) -> None:
        self.jobs = jobs or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None

    def map(self, func, items: list, heavy: int):
        """``map(func, items)``, in the workers when there are several jobs and at least 4 heavy items."""
        if self.jobs <= 1 or heavy < 4:
            return map(func, items)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs)
        return self._pool.map(func, items, chunksize=max(1, len(items) // (self.jobs * 8)))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


def _run_jobs(jobs_list, workers: _Workers, progress):
    heavy = sum(1 for j in jobs_list if j[2] in ("python", "notebook"))
    for result in workers.map(_convert_one, jobs_list, heavy):
        if progress:
            progress(result.rel)
        yield result
