"""A side of a parity run in a process of its own, so that the torch project and its MindSpore port never share
``sys.modules`` (a converted ``attend.py`` must not resolve to the torch project's ``attend``).

The parent starts ``python -m mindport.validators.parity.worker torch|mindspore FD LOG_DIR`` in the user's working
directory (a model may read files relative to it), its stdout and stderr going to ``<side>.log`` in the run's log
folder, and one end of a socket pair as ``FD``. GRAPH_MODE runs from the log folder, so that what MindSpore writes when
it fails to compile (``rank_0/om/analyze_fail.ir``) lands there, never in the user's folder.
Requests are ``(method, args, kwargs)`` tuples, answers ``("ok", value)``, ``("input", message, diagnostics)`` (the
user's input is wrong: exit code 2) or ``("error", message, traceback)``, all pickled by
``multiprocessing.connection`` (numpy arrays and plain data only: no framework object crosses). One process per side
serves every step of a run: build, weights, forward with hooks, graph mode, gradients, training.
"""
from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import traceback
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from pathlib import Path

from mindport.errors import InputError
from mindport.validators.parity.sides import Pending, SideError, error_text

_CLOSE = "__close__"


def exit_with_parent(interval: float = 1.0) -> None:
    """Ends this process when the process that started it is gone (a daemon thread watching the parent's pid): a
    side or builder process left behind by ``kill PID`` of ``migrate`` (SIGTERM), or by a CI job's time limit, went
    on computing a proof nobody would read, until it was killed by hand (fresh27: TDANet's two proof sides). A
    closed pipe alone ends a side only when it next reads a request."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="mindport-parent-watch", daemon=True).start()


def _impl(kind: str, log_dir: str):
    if kind == "torch":
        from mindport.validators.parity.side_torch import TorchSide

        return TorchSide()
    if kind == "mindspore":
        from mindport.validators.parity.side_mindspore import MindSporeSide

        return MindSporeSide(graph_dir=log_dir)
    raise SystemExit(f"unknown side {kind!r}")


def serve(kind: str, fd: int, log_dir: str) -> None:
    conn = Connection(fd)
    impl = _impl(kind, log_dir)
    while True:
        try:
            method, args, kwargs = conn.recv()
        except EOFError:
            return
        if method == _CLOSE:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.send(("ok", None))
            os._exit(0)  # nothing to keep: skip the frameworks' slow teardown (about 1 s each)
        try:
            reply = ("ok", getattr(impl, method)(*args, **kwargs))
        except InputError as exc:
            traceback.print_exc()  # to this side's log: the whole stack, MindSpore's C++ one included
            reply = ("input", exc.message, list(exc.diagnostics))
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent as data
            traceback.print_exc()
            reply = ("error", error_text(exc), traceback.format_exc())
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable value
            conn.send(("error", f"the {method} answer could not be sent: {type(exc).__name__}: {exc}", ""))


class RemoteSide:
    """The parent's handle on a side process: ``submit`` sends a request, ``Pending.result`` reads its answer
    (answers are read in the order the requests were sent)."""

    def __init__(self, kind: str, workdir: Path, name: str, env: dict | None = None):
        self.kind, self.name = kind, name
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = str(workdir / f"{kind}.log")
        parent, child = Pipe(duplex=True)
        fd = child.fileno()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "mindport.validators.parity.worker", kind, str(fd), str(workdir)],
                pass_fds=(fd,), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=_env(env))
        child.close()
        self.conn = parent
        self._sent = 0
        self._read = 0
        self._answers: dict[int, tuple] = {}

    def submit(self, method: str, *args, **kwargs) -> Pending:
        try:
            self.conn.send((method, args, kwargs))
        except (OSError, ValueError) as exc:
            return Pending(exc=self._stopped(exc))
        self._sent += 1
        number = self._sent
        return Pending(receive=lambda: self._answer(number))

    def call(self, method: str, *args, **kwargs):
        return self.submit(method, *args, **kwargs).result()

    def _answer(self, number: int):
        while self._read < number:
            try:
                reply = _PlainUnpickler(io.BytesIO(self.conn.recv_bytes())).load()
            except (EOFError, OSError) as exc:
                raise self._stopped(exc) from None
            except pickle.UnpicklingError as exc:
                raise SideError(self.name, f"the {self.name} side answered with {exc}") from None
            self._read += 1
            self._answers[self._read] = reply
        reply = self._answers.pop(number)
        if reply[0] == "ok":
            return reply[1]
        if reply[0] == "input":
            raise InputError(reply[1], reply[2])
        raise SideError(self.name, reply[1], reply[2])

    def _stopped(self, exc: BaseException) -> SideError:
        code = self.proc.poll()
        if code is None:
            try:
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = "still running"
        return SideError(self.name, f"the {self.name} process stopped (exit code {code}): {log_tail(self.log)}")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.conn.send((_CLOSE, (), {}))
                self.proc.wait(timeout=30)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.conn.close()


class _PlainUnpickler(pickle.Unpickler):
    """Answers hold numpy arrays and plain data only: a framework object would import torch or MindSpore into the
    parent (which compares both and must stay neutral), so it is refused."""

    def find_class(self, module: str, name: str):
        if module.split(".")[0] in ("torch", "mindspore"):
            raise pickle.UnpicklingError(f"a {module}.{name} object (sides send numpy arrays and plain data)")
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError):  # a project's class: importable on the side only
            raise pickle.UnpicklingError(f"a {module}.{name} object (sides send numpy arrays and plain data)") \
                from None


def log_tail(path: str, lines: int = 12) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty log)"


def _env(extra: dict | None = None) -> dict:
    from mindport.cpu_kernels import capped

    """The side's environment: ours, mindport importable, and ``extra`` (PYTHONPATH entries go after mindport's)."""
    env = dict(os.environ)
    extra = dict(extra or {})
    if extra.get("PYTHONPATH"):
        env["PYTHONPATH"] = extra.pop("PYTHONPATH") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    package_root = str(Path(__file__).resolve().parents[3])  # the folder holding mindport/
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the user's folders
    return capped(env)  # MindSpore's convolutions on the fast oneDNN path (mindport/cpu_kernels.py)


if __name__ == "__main__":  # pragma: no cover - the side process
    _args = sys.argv[1:4]
    sys.argv = sys.argv[:1]  # a model module that parses its command line at import (argparse) sees none
    exit_with_parent()
    serve(_args[0], int(_args[1]), _args[2])
