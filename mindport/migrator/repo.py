"""Whole repositories: mirror SRC into OUT, converting Python files and notebooks, adapting requirement files,
copying everything else verbatim. Encodings, BOMs and line endings are kept; bad files get one diagnostic each and
are copied unchanged; nothing is written into SRC unless ``in_place``; every write is atomic.

Trust: every file is converted on its own, in a supervised worker process, so one file that crashes the converter,
nests too deeply, eats memory or runs past the time limit costs that file only (one MP299 line, the file copied
unchanged). The tree is walked without following symlinks out of it; FIFOs and devices are never opened; what
cannot be read is reported (docs/diagnostics.md, MP204-MP208).

A content-hash cache (``OUT/.mindport-cache.json``) makes a re-run on an unchanged tree cheap: a file whose source,
options and mapping tables are unchanged, and whose output is still there, is not converted again.

This module runs a conversion (``convert_path``); its parts live beside it: ``tree.py`` (the walk, safe reads and
atomic writes), ``formats.py`` (one file by its kind: source encodings, notebooks, requirement files),
``project.py`` (the project's facts: class bases, local packages, star imports, names bound to lists), ``workers.py`` (the supervised
worker processes) and ``report.py`` (what a conversion reports).
"""
from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import os
import re
import subprocess
from pathlib import Path

from mindport import __version__
from mindport.errors import Diagnostic, InputError
from mindport.migrator.formats import imported_packages
from mindport.migrator.project import function_classes_from_bases, list_names, local_packages, sibling_modules, \
    argument_writers, backward_params, imported_names, module_classes_from_bases, object_classes_from_bases, \
    record_classes, held_cells, loader_field_reads, loader_param_reads, \
    parse_files, return_kinds, star_bindings, float64_free, conv1d_settings_unread, tensor_free_files
from mindport.migrator.report import ConversionReport, FileReport
from mindport.migrator.rules.module_class import module_classes
from mindport.migrator.grad_helpers import module_grad_helpers
from mindport.migrator.tree import (
    CACHE_NAME,
    TreeEntry,
    _atomic_copy,
    _atomic_link,
    _digest,
    _file_type,
    _kind,
    _ours,
    _ReadError,
    _same_copy,
    _too_large,
    atomic_write,
    read_regular,
    walk_tree,
)
from mindport.migrator.workers import _Converted, _Workers

DEFAULT_TIMEOUT = 120.0  # seconds per file; LibCST converts about 60 kB/s on one core
# bytes per file: LibCST holds several hundred times a file's size in memory while it converts it (a 1 MB file
# peaks near 0.85 GB), so a generated 5 MB file would need about 4 GB; bigger files are copied unchanged (MP204)
DEFAULT_MAX_FILE_SIZE = 1_000_000


def _tables_fingerprint(mappings: tuple = ()) -> str:
    import mindport.mappings as tables

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(tables.DATA_DIR.rglob("*.toml")):  # the tables and the object surface (data/surface/)
        digest.update(path.read_bytes())
    for package in (Path(__file__).parent, Path(tables.__file__).parent):  # the converter and its transforms
        for path in sorted(package.rglob("*.py")):
            digest.update(path.read_bytes())
    digest.update(tables.overlay_fingerprint(mappings).encode())
    return digest.hexdigest()


def _git_dirty(path: Path) -> bool | None:
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=path, capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return bool(out.stdout.strip())


def convert_path(src, dst=None, *, target: str = "nn", ms_version: tuple[int, int] | None = None, jobs: int | None = None,
                 exclude: tuple[str, ...] = (), in_place: bool = False, backup: bool = True, diff: bool = False,
                 force: bool = False, use_cache: bool = True, progress=None, timeout: float | None = DEFAULT_TIMEOUT,
                 max_file_size: int | None = DEFAULT_MAX_FILE_SIZE, mappings=(), device: str = "any",
                 facts=None) -> ConversionReport:
    """Convert a file or a directory tree into ``dst`` (or in place, or only a diff). Raises InputError for
    unusable arguments.

    Every file is converted on its own, in a worker process: a failure, a crash or a file over ``timeout``
    seconds costs that file only (one MP299 line, the file copied unchanged). Files over ``max_file_size``
    bytes are copied unchanged with MP204. ``mappings``: the user's overlay tables (their paths), on top of the
    bundled ones. ``progress(rel, done, total)`` is called once per file of the tree. ``facts``: a recorded torch run
    (``mindport.observed.Facts``, its files relative to ``src``) whose observations the conversion uses."""
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
            claim_output(src, dst_path, force)
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
        if not entries and not problems:
            raise InputError(f"{src} has no files to convert" + (" once --exclude is applied" if exclude else "")
                             + ": give the project's folder")
    try:
        with overlays(tuple(mappings)):
            return _convert_entries(src, dst_path, entries, problems, single=single, target=target,
                                    ms_version=ms_version, jobs=jobs, in_place=in_place, backup=backup, diff=diff,
                                    use_cache=use_cache, progress=progress, timeout=timeout,
                                    max_file_size=max_file_size, mappings=tuple(str(p) for p in mappings),
                                    device=device, facts=facts)
    except MappingError as exc:
        raise InputError(str(exc)) from None


def _convert_entries(src: Path, dst_path: Path, entries: list[TreeEntry], problems: list[FileReport], *, single: bool,
                     target, ms_version, jobs, in_place, backup, diff, use_cache, progress, timeout, max_file_size,
                     mappings, device="any", facts=None) -> ConversionReport:
    writes = not diff
    cache_path = (dst_path.parent if single else dst_path) / CACHE_NAME
    if writes and not in_place and not single and not cache_path.exists():
        # The mark of a folder mindport writes, first of all: a concurrent run into the same OUT sees it.
        atomic_write(cache_path, json.dumps({"fingerprint": None, **_source_mark(src, dst_path), "files": {}}).encode())
    cache_json: dict = {}
    use_cache = use_cache and not single  # a single file's output is that file: nothing is written beside it
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
        python_files = [r for r in sorted(digests) if r.endswith(".py")]
        # what star imports bring depends on every Python file's text: reused from the cache while none changed
        # (reading it parses the files that star-import and the modules they name: most of a re-run's time)
        stars_key = hashlib.sha256("".join(f"{r}:{digests[r]};" for r in sorted(digests)
                                           if r.endswith((".py", ".ipynb"))).encode()).hexdigest()
        cached_stars = cache_json.get("stars") if isinstance(cache_json, dict) else None
        if single:  # a file alone: its own functions' return kinds (convert_source)
            stars, lists, returns, imported, no_float64, settings_unread = {}, frozenset(), None, frozenset(), None, None
            tensor_free, writers, reads, handed = frozenset(), (), frozenset(), ()
            backed = records = held = None
        elif isinstance(cached_stars, dict) and cached_stars.get("key") == stars_key \
                and "tensor_free" in cached_stars and "argument_writers" in cached_stars \
                and "backward_params" in cached_stars and "record_classes" in cached_stars \
                and "held_cells" in cached_stars \
                and "loader_reads" in cached_stars and "loader_params" in cached_stars:
            stars = {rel: tuple(tuple(b) for b in bindings) for rel, bindings in cached_stars["files"].items()}
            lists = frozenset(cached_stars["lists"])
            returns = tuple(tuple(k) for k in cached_stars["returns"])
            imported = frozenset(cached_stars["imported"])
            no_float64 = bool(cached_stars["float64_free"])
            settings_unread = bool(cached_stars["conv1d_settings_unread"])
            tensor_free = frozenset(cached_stars["tensor_free"])
            writers = tuple((n, tuple(p), tuple(w)) for n, p, w in cached_stars["argument_writers"])
            backed = tuple((n, tuple(p), tuple(b)) for n, p, b in cached_stars["backward_params"])
            records = tuple((n, tuple(tuple(f) for f in fs)) for n, fs in cached_stars["record_classes"])
            held = tuple(tuple(h) for h in cached_stars["held_cells"])
            reads = frozenset(cached_stars["loader_reads"])
            handed = tuple((n, tuple(p), tuple(r)) for n, p, r in cached_stars["loader_params"])
        else:
            stars = star_bindings(src, python_files)
            files = parse_files(src, python_files)  # read and parsed once for the three facts below
            lists = list_names(files)  # names bound to a list in some file (EfficientNet's stride)
            returns = return_kinds([tree for _, tree in files])  # what each function returns (C-SWM's to_one_hot)
            backed = backward_params([tree for _, tree in files])  # helpers handed a loss they backpropagate
            records = record_classes([tree for _, tree in files])  # dataclass records built in forward: dicts
            held = held_cells([tree for _, tree in files])  # sub-Cells a parent calls twice (RevIN): state passed
            imported = imported_names(files, local)  # names imported from the project's modules
            no_float64 = float64_free([tree for _, tree in files])  # no float64 tensor anywhere (SGD's parameters)
            settings_unread = conv1d_settings_unread([tree for _, tree in files])  # a Conv1d is MindSpore's own
            notebooks = tuple((e.rel, e.path.read_text("utf-8", "replace")) for e in entries if e.kind == "notebook")
            tensor_free = tensor_free_files(files, python_files, local, notebooks)  # no tensor reaches: copied as is
            writers = argument_writers(files, imported)  # helpers writing into a caller's tensor (former's mask_)
            reads = loader_field_reads(files)  # functions whose returned loaders another file reads .dataset of
            handed = loader_param_reads(files)  # functions reading .dataset of a loader they are handed
        speculative = {"target": target, "ms_version": ms_version, "module_classes": frozenset(),
                       "local_packages": local, "device": device, "list_names": lists, "return_kinds": returns,
                       "backward_params": backed, "record_classes": records, "held_cells": held,
                       "imported_names": imported, "float64_free": no_float64,
                       "conv1d_settings_unread": settings_unread, "argument_writers": writers,
                       "loader_reads": reads, "loader_params": handed}

        siblings = sibling_modules(python_files) if not single else {}
        # helpers of several lines holding torch.autograd.grad, by module: written out where other modules call them
        helper_defs = [] if single else [(rel, *found) for rel in python_files
                                          for found in module_grad_helpers(_text(src / rel))]

        def helpers_for(rel: str) -> tuple:
            folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
            out = []
            for hrel, name, source, bindings in helper_defs:
                if hrel == rel:
                    continue
                hfolder, stem = (hrel.rsplit("/", 1) if "/" in hrel else ("", hrel))
                keys = {hrel[:-3].replace("/", ".")} | ({stem[:-3]} if hfolder == folder else set())
                out.extend((key, name, source, bindings) for key in sorted(keys))
            return tuple(out)

        def for_file(rel: str, opts: dict) -> dict:  # a file's options: the torch names its star imports bring,
            # the sites a recorded run saw only floating inputs at, and the modules next to it (a script's imports)
            folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
            if siblings.get(folder):
                opts = {**opts, "local_packages": opts["local_packages"] | siblings[folder]}
            observed = facts.float_sites(rel) if facts is not None else ()
            opts = {**opts, "float_sites": observed} if observed else opts
            uniform = facts.uniform_sites(rel) if facts is not None else ()
            opts = {**opts, "uniform_sites": uniform} if uniform else opts
            decided = facts.decided_sites(rel) if facts is not None else ()
            opts = {**opts, "decided_sites": decided} if decided else opts
            opts = {**opts, "tensor_free": True} if rel in tensor_free else opts
            helpers = helpers_for(rel)
            opts = {**opts, "grad_helpers": helpers} if helpers else opts
            return {**opts, "star_bindings": stars[rel]} if rel in stars else opts

        for result in workers.map([(rel, path, "python", for_file(rel, speculative), settings)
                                   for rel, path in unread.items()]):
            first[result.rel] = result
            bases[result.rel] = result.class_bases or {}
            tick(result.rel)
        project_modules = module_classes_from_bases(list(bases.values()))
        objects = object_classes_from_bases(list(bases.values()))
        functions = function_classes_from_bases(list(bases.values()))
        options = {"target": target, "ms_version": ms_version, "module_classes": project_modules,
                   "local_packages": local, "device": device, "object_classes": objects, "list_names": lists,
                   "function_classes": functions, "return_kinds": returns, "imported_names": imported,
                   "backward_params": backed, "record_classes": records, "held_cells": held,
                   "float64_free": no_float64, "conv1d_settings_unread": settings_unread,
                   "argument_writers": writers, "loader_reads": reads, "loader_params": handed}
        calls_object = _calls_any(objects, functions)
        fingerprint = _tables_fingerprint(mappings) + json.dumps(
            {k: sorted(v) if isinstance(v, frozenset) else v for k, v in options.items()}, sort_keys=True) + (
            json.dumps(sorted(tensor_free))) + json.dumps(helper_defs) + (
            json.dumps(facts.to_json(), sort_keys=True) if facts is not None else "")
        cache = old_cache if old_cache and cache_json.get("fingerprint") == fingerprint else {}
        jobs_list = []
        done: list[_Converted] = []
        new_cache = {"fingerprint": fingerprint, **_source_mark(src, dst_path), "files": {},
                     "stars": {"key": stars_key if not single else "", "files": {r: [list(b) for b in v]
                                                                                 for r, v in stars.items()},
                               "lists": sorted(lists), "returns": [list(k) for k in returns or ()],
                               "imported": sorted(imported), "float64_free": no_float64,
                               "conv1d_settings_unread": settings_unread, "tensor_free": sorted(tensor_free),
                               "argument_writers": [[n, list(p), list(w)] for n, p, w in writers],
                               "backward_params": [[n, list(p), list(b)] for n, p, b in backed or ()],
                               "record_classes": [[n, [list(f) for f in fs]] for n, fs in records or ()],
                               "held_cells": [list(h) for h in held or ()],
                               "loader_reads": sorted(reads),
                               "loader_params": [[n, list(p), list(r)] for n, p, r in handed]}}
        by_rel = {entry.rel: entry for entry in todo}
        packaging: list[TreeEntry] = []
        imports: set[str] = set()  # what the converted Python files import (the packaging lists it)
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
                if (converted.summary is None or converted.class_names == module_classes(
                        converted.summary, options["module_classes"]) & names) and not calls_object(entry.path, names):
                    done.append(converted)  # the project's module classes change nothing in this file
                else:
                    jobs_list.append((rel, str(entry.path), entry.kind, for_file(rel, options), settings))
                continue
            if entry.kind in ("requirements", "pyproject"):
                packaging.append(entry)  # after the code: they list what the converted files import
                continue
            hit = cache.get(rel)
            if hit and hit["sha256"] == digests[rel] and writes and not in_place and out_path.is_file() \
                    and hit.get("star", []) == [list(b) for b in stars.get(rel, ())]:
                if entry.kind == "python" and "imports" not in hit:  # a cache of an earlier release
                    hit = {**hit, "imports": sorted(imported_packages(read_regular(out_path)))}
                imports |= set(hit.get("imports", ()))
                new_cache["files"][rel] = hit
                # a file that failed (MP201: copied unchanged) stays failed on a re-run: "cached" means converted
                report.files.append(FileReport(rel, "failed" if hit.get("status") == "failed" else "cached",
                                               [Diagnostic(**d) for d in hit["diagnostics"]], hit["lines"],
                                               hit["sites"]))
                tick(rel)
                continue
            jobs_list.append((rel, str(entry.path), entry.kind, for_file(rel, options), settings))

        converted_files = itertools.chain(done, workers.map(jobs_list))
        has_code = any(entry.kind == "python" for entry in entries)
        for result in itertools.chain(converted_files, _packaging(packaging, imports if has_code else None, settings)):
            tick(result.rel)
            entry = by_rel[result.rel]
            file_report = FileReport(result.rel, result.status, result.diagnostics, result.lines, result.sites)
            report.files.append(file_report)
            file_imports = imported_packages(result.output if result.output is not None
                                             else read_regular(entry.path)) if entry.kind == "python" else set()
            imports |= file_imports
            if diff:
                if result.output is not None:
                    before = entry.path.read_bytes().decode(errors="replace").splitlines(keepends=True)
                    after = result.output.decode(errors="replace").splitlines(keepends=True)
                    file_report.diff = "".join(difflib.unified_diff(before, after, f"a/{result.rel}",
                                                                    f"b/{result.rel}"))
                continue
            if not _write_one(file_report, entry, result.output, dst_path, single, in_place, backup):
                continue
            if entry.kind in ("requirements", "pyproject"):
                continue  # redone on every run: they follow the whole project's imports
            if result.status in ("converted", "unchanged") or any(d.code == "MP201" for d in result.diagnostics):
                new_cache["files"][result.rel] = {
                    "sha256": digests[result.rel], "status": result.status, "lines": result.lines, "sites": result.sites,
                    "diagnostics": [d.to_json() for d in result.diagnostics]}
                if result.rel in bases:
                    new_cache["files"][result.rel]["class_bases"] = bases[result.rel]
                if entry.kind == "python":
                    new_cache["files"][result.rel]["imports"] = sorted(file_imports)
                if result.rel in stars:
                    new_cache["files"][result.rel]["star"] = [list(b) for b in stars[result.rel]]
        report.files.sort(key=lambda f: f.path)
        if writes and not in_place and not single:
            new_cache["written"] = sorted({f.path for f in report.files if f.status not in ("skipped",)}
                                          | set(_previous_run(dst_path).get("written", ())))
            atomic_write(cache_path, json.dumps(new_cache if use_cache else {**new_cache, "files": {}}).encode())
        return report
    finally:
        workers.close()


# what mindport writes into OUT beside the mirrored tree (migrate's steps); removed with another source's conversion
_RUN_ARTIFACTS = ("mindport-report.json", "mindport-report.html", "mindport-logs", "mindport_scripts",
                  "mindport_export")


def _calls_any(classes: frozenset[str], functions: frozenset[str] = frozenset()):
    """Whether a file calls one of these classes that it does not define (``Trainer(model)``, imported), or the
    ``apply`` of one of the project's autograd ``functions`` (``invmat.InvMatrix.apply``): the first, speculative
    conversion knew none of the project's classes, so such a file is converted again with them."""
    if not classes and not functions:
        return lambda path, defined: False
    alternatives = [rb"\b(" + b"|".join(re.escape(c.encode()) for c in sorted(classes)) + rb")\s*\("] if classes \
        else []
    if functions:
        names = b"|".join(re.escape(c.encode()) for c in sorted(functions))
        alternatives.append(rb"\b(" + names + rb")\s*\.\s*apply\b")
    pattern = re.compile(b"|".join(alternatives))

    def calls(path: Path, defined) -> bool:
        try:
            return any(next(g for g in m.groups() if g).decode() not in defined
                       for m in pattern.finditer(path.read_bytes()))
        except OSError:
            return False
    return calls


def _previous_run(dst_path: Path) -> dict:
    try:
        data = json.loads((dst_path / CACHE_NAME).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _source_mark(src: Path, dst_path: Path) -> dict:
    """Which source OUT converts: its absolute path, and its path from OUT (which still names it once the project
    folder holding both is moved or copied)."""
    return {"source": str(src.resolve()), "source_from_output": os.path.relpath(src.resolve(), dst_path.resolve())}


def claim_output(src: Path, dst_path: Path, force: bool) -> None:
    """A tree's output folder: outside the source; empty, or written by mindport (``force`` writes into another);
    and it holds at most one source's conversion: one of another source is refused, or, with ``force``, removed
    first (the files that run wrote, as its cache lists them, and migrate's reports, logs, scripts and export), so
    that the two runs never mix. ``migrate`` claims OUT before its side processes write their logs there."""
    if dst_path.resolve() == src.resolve() or src.resolve() in dst_path.resolve().parents:
        raise InputError(f"the output {dst_path} is inside the source {src}: choose a folder outside it")
    if dst_path.exists() and not force and not (dst_path / CACHE_NAME).exists() \
            and any(not _ours(e) and e.name not in _RUN_ARTIFACTS for e in dst_path.iterdir()):
        raise InputError(f"{dst_path} exists and was not written by mindport: choose an empty folder, "
                         "or pass --force to write into it")
    previous = _previous_run(dst_path)
    other = previous.get("source")
    relative = previous.get("source_from_output")
    if not other or other == str(src.resolve()) or (
            isinstance(relative, str) and (dst_path.resolve() / relative).resolve() == src.resolve()):
        return  # the same source, or the same project moved or copied whole (source and output together)
    if not force:
        raise InputError(f"{dst_path} holds the conversion of another source ({other}): choose another folder, or "
                         "pass --force to remove that conversion first")
    import shutil

    for rel in [*previous.get("written", ()), *_RUN_ARTIFACTS]:
        target = dst_path / rel
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        elif target.exists() or target.is_symlink():
            target.unlink()
    _remove_empty_folders(dst_path)
    (dst_path / CACHE_NAME).unlink(missing_ok=True)


def _remove_empty_folders(root: Path) -> None:
    for folder in sorted((p for p in root.rglob("*") if p.is_dir() and not p.is_symlink()),
                         key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            pass


def _packaging(entries: list[TreeEntry], imports: set[str] | None, settings: dict):
    """The requirement files and pyproject.toml, converted once every Python file is (a generator: ``imports`` is
    complete when it is first read): they list what the converted code imports (None: no code converted)."""
    from mindport.migrator.workers import _convert_one

    for entry in entries:
        options = {"imports": None if imports is None else frozenset(imports)}
        yield _convert_one((entry.rel, str(entry.path), entry.kind, options, settings))


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


def _text(path) -> str:
    """A Python file's text (empty when it cannot be read)."""
    try:
        return read_regular(path).decode("utf-8", "replace")
    except OSError:
        return ""
