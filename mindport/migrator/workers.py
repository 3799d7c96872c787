"""Converting one file in a supervised worker process: whatever goes wrong (an exception, a crash in native code,
memory, the per-file time limit) costs that file only, as one MP299 line, the file copied unchanged."""
from __future__ import annotations

import contextlib
import functools
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import pickle
import signal
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

from mindport import __version__
from mindport.errors import Diagnostic
from mindport.migrator.formats import (
    _convert_python,
    convert_notebook_bytes,
    convert_pyproject_text,
    convert_requirements_text,
)
from mindport.migrator.project import class_bases
from mindport.migrator.rules.module_class import module_classes
from mindport.migrator.tree import _ReadError, read_regular


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
        out = convert_requirements_text(data.decode("utf-8", "replace"), options.get("imports")).encode("utf-8")
        diags, lines, sites, changed = [], 0, 0, out != data
    elif kind == "pyproject":
        out = convert_pyproject_text(data.decode("utf-8", "replace"), options.get("imports")).encode("utf-8")
        diags, lines, sites, changed = [], 0, 0, out != data
    else:
        return _Converted(rel, "copied", [], 0, 0, None)
    extra = {}
    if kind == "python":
        bases = class_bases(data)
        summary = result.class_summary if result is not None else None
        extra = {"class_bases": bases, "summary": summary,
                 "class_names": frozenset(module_classes(summary or (), options["module_classes"]) & set(bases))}
    if any(d.code in ("MP201", "MP202", "MP203", "MP204", "MP299") for d in diags):  # copied unchanged: not converted
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


# A worker's acknowledgement that it began converting a job (sent before its result), and how long a worker may
# take to get there (process start-up, a busy machine) before the per-file time limit starts counting anyway.
_STARTED = "started"
_STARTUP_ALLOWANCE = 30.0


class _Worker:
    def __init__(self, context) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.job = None  # (index, job) being converted
        self.started = 0.0  # when the job was sent; reset when the worker says it began converting
        self.converting = False  # the worker has acknowledged the job: the per-file time limit runs from then

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
        _warm_up()
        pending = list(reversed(list(enumerate(jobs_list))))
        busy: list[_Worker] = []
        try:
            while pending or busy:
                while pending and len(busy) < self.jobs:
                    worker = self._idle.pop() if self._idle else self._start()
                    worker.job = pending.pop()
                    worker.started, worker.converting = time.monotonic(), False
                    try:
                        worker.conn.send(worker.job)
                    except (OSError, ValueError):  # the worker died while idle: start another for this job
                        pending.append(worker.job)
                        worker.stop()
                        continue
                    busy.append(worker)
                wait_for = None
                if self.timeout is not None:
                    wait_for = max(0.0, min(self._deadline(w) for w in busy) - time.monotonic())
                ready = set(mp_connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy], wait_for))
                for worker in list(busy):
                    result = None
                    if worker.conn in ready:
                        try:
                            index, result = worker.conn.recv()
                        except (EOFError, OSError):
                            result = None
                        if isinstance(result, str) and result == _STARTED:  # the file's own time starts now, not when the worker was forked
                            worker.started, worker.converting = time.monotonic(), True
                            continue
                    if result is not None:
                        busy.remove(worker)
                        worker.job = None
                        self._idle.append(worker)
                        yield result
                    elif worker.conn in ready or worker.process.sentinel in ready:
                        busy.remove(worker)
                        worker.stop()
                        yield _failed(worker.job[1][0], *_died(worker.process.exitcode))
                    elif self.timeout is not None and time.monotonic() >= self._deadline(worker):
                        busy.remove(worker)
                        worker.stop()
                        yield _failed(worker.job[1][0], f"conversion took longer than the per-file time limit of "
                                                        f"{self.timeout:g} s: stopped",
                                      f"{_COPIED}; raise the limit with --timeout, or split the file")
        finally:
            for worker in busy:  # an interrupted run (Ctrl-C) or a consumer that stopped early
                worker.stop()

    def _deadline(self, worker: _Worker) -> float:
        """When ``worker`` is past the per-file time limit. The limit counts the file's conversion only: until the
        worker acknowledges the job (a new worker is still starting, on a busy machine seconds after the fork) it
        also gets ``_STARTUP_ALLOWANCE``."""
        return worker.started + self.timeout + (0.0 if worker.converting else _STARTUP_ALLOWANCE)

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


@functools.lru_cache(maxsize=1)  # once per process
def _warm_up() -> None:
    """Convert a small model once in the parent, so that the converter's lazily built tables (the object surface,
    the runtime's named results, the scope rules' syntax fields, compiled patterns) are built before workers are
    forked and inherited by each of them: a worker's first file then costs what any file costs, and the per-file time
    limit measures the file, not the worker's start-up."""
    from mindport.migrator import convert_source

    with contextlib.suppress(Exception):  # a warm-up, never a reason to fail the run
        convert_source(_WARM_UP_SOURCE, "<warm-up>")


_WARM_UP_SOURCE = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        y, _ = torch.max(x, dim=1)
        return F.relu(self.fc(x)).sum(1) + y
'''


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
        try:
            conn.send((index, _STARTED))
        except (OSError, ValueError):
            return
        result = _convert_one(job)
        try:
            conn.send((index, result))
        except (OSError, ValueError, TypeError, RecursionError, pickle.PicklingError) as exc:
            try:
                conn.send((index, _failed(job[0], *_describe(exc))))
            except (OSError, ValueError):
                return
