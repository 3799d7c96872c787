"""The source tree, read and written safely: the walk (symlinks never followed out of the tree, FIFOs and devices
never opened, each file classified by kind), reading a regular file without blocking, and atomic writes (unique
temporaries renamed into place, so a reader or a concurrent run never sees half a file). docs/diagnostics.md,
MP204-MP208."""
from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import NamedTuple

from mindport.errors import Diagnostic
from mindport.migrator.report import FileReport

CACHE_NAME = ".mindport-cache.json"

_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".tox",
              ".ipynb_checkpoints", "node_modules"}
_REQUIREMENT_FILE = re.compile(r"^requirements.*\.(txt|in)$")


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


def _digest(path: Path) -> str:
    """sha256 of a regular file (never opens a FIFO or follows a link; raises _ReadError)."""
    return hashlib.sha256(read_regular(path)).hexdigest()


def _ours(entry: os.DirEntry | Path) -> bool:
    """Files mindport itself puts in OUT first (the cache, and temporaries of a run still writing)."""
    return entry.name == CACHE_NAME or entry.name.endswith(TMP_SUFFIX)
