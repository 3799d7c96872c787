"""Deploy the port: write the MindSpore model as MindIR (``mindspore.export``), load it back (``mindspore.load`` +
``nn.GraphCell``) and check the reloaded graph gives the Cell's outputs on the same inputs: an export is proven
like parity. A graph that differs is not written where it was asked for, and the cause is localised the way
``validate`` localises a layer: the innermost layer whose own export differs (or fails) while each of its
sub-layers, exported alone on the inputs it received, reloads equal.

Used by ``mindport export`` (which builds the model in a MindSpore process of its own, as ``validate`` does: its
log, MindSpore's C++ stack included, goes to a log file and nothing is written into the working directory) and as
the last step of ``mindport migrate`` (in the process that proved parity). Building the model runs the project's
code (its module and ``--ctor``), like ``validate``.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mindport.errors import Diagnostic, InputError


@dataclass
class ExportReport:
    model: str
    path: str
    inputs: list[str]
    checkpoint: str | None = None
    bytes: int = 0
    seconds: float = 0.0
    outputs: list = field(default_factory=list)  # validators.parity.results.OutputResult, reloaded graph vs Cell
    structure_ok: bool = True
    error: str = ""  # export or reload failed: why
    written: bool = False  # the MindIR is at ``path`` (only when it reloads equal)
    not_exported: list[str] = field(default_factory=list)  # output leaves MindIR cannot hold (None, numbers)
    cause: dict = field(default_factory=dict)  # the innermost layer whose export differs or fails (see localise)
    log: str = ""  # the MindSpore process's log (``mindport export --log-dir``)

    @property
    def ok(self) -> bool:
        return not self.error and self.structure_ok and all(o.allclose for o in self.outputs)

    def to_json(self) -> dict:
        return {"ok": self.ok, "model": self.model, "path": self.path, "written": self.written,
                "inputs": self.inputs, "checkpoint": self.checkpoint, "bytes": self.bytes,
                "seconds": round(self.seconds, 2), "error": self.error, "structure_ok": self.structure_ok,
                "not_exported": self.not_exported, "cause": self.cause, "log": self.log,
                "outputs": [dataclasses.asdict(o) for o in self.outputs]}

    @classmethod
    def from_json(cls, data: dict) -> "ExportReport":
        from mindport.validators.parity.results import OutputResult

        fields = {k: v for k, v in data.items() if k in {f.name for f in dataclasses.fields(cls)}}
        fields["outputs"] = [OutputResult(**o) for o in data.get("outputs", [])]
        return cls(**fields)

    def summary(self) -> str:
        left = f"; not in the MindIR (not a tensor): {', '.join(self.not_exported)}" if self.not_exported else ""
        if self.error:
            return f"MindIR export failed, nothing written: {self.error}" + self._cause_text()
        worst = max((o.max_abs for o in self.outputs if o.max_abs is not None), default=0.0)
        if not self.ok:
            return (f"MindIR export NOT written to {self.path}: reloaded with mindspore.load + nn.GraphCell, its "
                    f"outputs DIFFER from the Cell (max abs {worst:.3g}, {len(self.outputs)} output(s))"
                    + self._cause_text() + left)
        return (f"wrote {self.path} ({self.bytes / 1e6:.2f} MB); reloaded with mindspore.load + nn.GraphCell: "
                f"outputs match the Cell (max abs {worst:.3g}, {len(self.outputs)} output(s))" + left)

    def _cause_text(self) -> str:
        c = self.cause
        if not c:
            return ""
        where = f" at {c['site']}" if c.get("site") else ""
        return f"; cause: layer {c['path'] or '<root>'} ({c['type']}){where}: {c['note']}"

    def diagnostic(self, file: str = "<export>") -> Diagnostic | None:
        """MP601 at the cause's converted line (else at ``file``), or None when the export holds."""
        if self.ok:
            return None
        site = self.cause.get("site", "")
        path, _, line = site.rpartition(":")
        where = {"file": path, "line": int(line)} if path and line.isdigit() else {"file": file}
        return Diagnostic("MP601", self.summary(), **where, api=self.cause.get("path"),
                          suggestion=self.cause.get("fix", ""))


def export_mindir(model_ref: str, out, *, ctor: str = "", inputs=(), checkpoint=None, rtol: float = 1e-5,
                  atol: float = 1e-6, seed: int = 0, root=None, log_dir=None) -> ExportReport:
    """Build the model in a MindSpore process of its own (``root``: where a dotted or package reference is found,
    as ``validate --root``), load ``checkpoint``, then export, reload, compare (``export_cell``). The process's
    log goes to ``log_dir`` (default: a temporary folder, removed). Raises InputError for unusable arguments;
    export/reload failures and differences are reported."""
    out = Path(out)
    if out.suffix != ".mindir":
        raise InputError(f"-o {out}: the output must end with .mindir")
    if not inputs:
        raise InputError("export needs the model's inputs: --input SHAPE:DTYPE (e.g. 2x3x32x32:float32)")
    from mindport.validators.parity.compare import _absolute_ref, _resolve_inputs
    from mindport.validators.parity.loading import resolve_model_ref
    from mindport.validators.parity.sides import _checked
    from mindport.validators.parity.worker import RemoteSide

    specs, arrays = _resolve_inputs(inputs, seed)
    if checkpoint is not None and not Path(checkpoint).is_file():
        raise InputError(f"checkpoint {checkpoint} does not exist")
    root = str(Path(root or ".").resolve())
    resolve_model_ref(model_ref, root)  # a wrong reference is said before MindSpore starts
    ref = _absolute_ref(str(model_ref), root)
    keep = log_dir is not None
    workdir = Path(log_dir).resolve() if keep else Path(tempfile.mkdtemp(prefix="mindport-export-"))
    side = None
    started = time.perf_counter()
    try:
        side = RemoteSide("mindspore", workdir, "MindSpore")
        _checked(side.call, "hello")
        _checked(side.call, "build", ref, ctor, seed, root)
        if checkpoint is not None:
            _checked(side.call, "load_mindspore_checkpoint", str(Path(checkpoint).resolve()))
        answer = _checked(side.call, "export", str(out.resolve()), arrays, rtol, atol, model=str(model_ref),
                          checkpoint=str(checkpoint) if checkpoint else None, labels=[str(s) for s in specs])
    finally:
        if side is not None:
            side.close()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    report = ExportReport.from_json(answer)
    report.path = str(out)
    report.log = side.log if keep and side is not None else ""
    report.seconds = time.perf_counter() - started
    return report


def export_cell(cell, out, arrays, report: ExportReport, *, rtol: float = 1e-5, atol: float = 1e-6,
                started: float | None = None) -> ExportReport:
    """Export a built Cell (inference mode) on the numpy ``arrays`` as MindIR, reload it and compare it with the
    Cell; only a graph that reloads equal is moved to ``out`` (written whole or not at all). ``report`` gets the
    outcome, and on a difference or a failure the layer that causes it (``localise``). Output leaves MindIR cannot
    hold (``None``, Python numbers: a model returning ``(logits, None)``) are left out of the graph and listed.
    Run it where MindSpore may write its failure files (``rank_0/om``): the working directory is not changed here."""
    import mindspore as ms

    from mindport.validators.parity.metrics import compare_structures

    started = time.perf_counter() if started is None else started
    out = Path(out)
    tensors = [ms.Tensor(a) for a in arrays]
    try:
        expected = cell(*_fresh(tensors))
    except Exception as exc:  # noqa: BLE001 - the Cell itself raises: nothing to export, said at its line
        from mindport.validators.parity.hooks import raise_site
        from mindport.validators.parity.sides import error_text

        report.error = "the Cell raised: " + error_text(exc).splitlines()[0][:400]
        report.cause = {"path": "", "type": type(cell).__name__, "site": raise_site(exc), "note": "the Cell raised",
                        "fix": ""}
        report.seconds = time.perf_counter() - started
        return report
    report.not_exported = [key for key, _ in _leaves(expected) if key not in dict(_tensor_leaves(expected))]
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.stem}.", dir=out.parent) as folder:
        tmp = Path(folder) / out.name
        try:
            got = _export_and_reload(cell, tensors, expected, tmp)
        except Exception as exc:  # noqa: BLE001 - a model MindIR cannot hold is a finding, not a crash
            from mindport.validators.parity.sides import error_text, graph_location

            print(f"mindport: the MindIR export of {report.model} failed:\n{exc}", file=sys.stderr)  # to the log
            report.error = error_text(exc).splitlines()[0][:400]
            report.cause = localise(cell, tensors, rtol, atol, "its export fails")
            if graph_location(str(exc)):
                report.cause["site"] = graph_location(str(exc))  # the statement MindSpore could not compile
            report.seconds = time.perf_counter() - started
            return report
        report.outputs, structure = compare_structures(expected, got, rtol, atol)
        report.structure_ok = bool(structure.get("ok", True))
        if report.ok:
            os.replace(tmp, out)
            report.written, report.bytes = True, out.stat().st_size
        else:
            report.cause = localise(cell, tensors, rtol, atol, "its reloaded export differs")
    report.seconds = time.perf_counter() - started
    return report


# ------------------------------------------------------------------------------------------------ the graph

def _fresh(tensors):
    """Copies of the inputs: an in-place layer writes into what it is given."""
    import mindspore as ms

    return [ms.Tensor(t.asnumpy().copy()) for t in tensors]


def _leaves(obj) -> list:
    from mindport.validators.parity.metrics import flatten_outputs

    return flatten_outputs(obj)


def _tensor_leaves(obj) -> list:
    import mindspore as ms

    return [(key, value) for key, value in _leaves(obj) if isinstance(value, ms.Tensor)]


def _tensor_paths(obj, path=()) -> list[tuple]:
    """Index paths (positions and keys) of the tensor leaves of a tuple/list/dict output, in flatten order."""
    import mindspore as ms

    if isinstance(obj, ms.Tensor):
        return [path]
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _tensor_paths(v, (*path, k))]
    if isinstance(obj, (tuple, list)):
        return [p for i, v in enumerate(obj) for p in _tensor_paths(v, (*path, i))]
    return []


def _with_leaves(obj, values):
    """``obj`` with its tensor leaves replaced, in order, by ``values`` (an iterator); other leaves kept."""
    import mindspore as ms

    if isinstance(obj, ms.Tensor):
        return next(values)
    if isinstance(obj, dict):
        return {k: _with_leaves(v, values) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_with_leaves(v, values) for v in obj) if not hasattr(obj, "_fields") else \
            type(obj)(*(_with_leaves(v, values) for v in obj))
    return obj


def _plain(obj) -> bool:
    """A tensor, or a tuple of plain outputs: MindIR holds it as it is."""
    import mindspore as ms

    return isinstance(obj, ms.Tensor) or (type(obj) is tuple and bool(obj) and all(_plain(v) for v in obj))


def _graph_cell(cell, expected):
    """The Cell to export: itself when its output is plain, else a wrapper returning its tensor leaves as a flat
    tuple (MindIR holds no None; the reloaded graph's values are put back in the output's structure to compare)."""
    if _plain(expected):
        return cell
    from mindspore import nn

    class TensorLeaves(nn.Cell):
        def __init__(self, inner, paths):
            super().__init__(auto_prefix=False)  # the model's parameter names stay as they are
            self.inner, self.paths = inner, paths

        def construct(self, *args):
            output = self.inner(*args)
            leaves = []
            for path in self.paths:
                value = output
                for step in path:
                    value = value[step]
                leaves.append(value)
            return tuple(leaves)

    wrapper = TensorLeaves(cell, tuple(_tensor_paths(expected)))
    wrapper.set_train(False)
    return wrapper


def _export_and_reload(cell, tensors, expected, path: Path):
    """``cell`` exported to ``path`` and run again from the file: its output in ``expected``'s structure."""
    import mindspore as ms
    from mindspore import nn

    ms.export(_graph_cell(cell, expected), *_fresh(tensors), file_name=str(path), file_format="MINDIR")
    got = nn.GraphCell(ms.load(str(path)))(*_fresh(tensors))
    if _plain(expected):
        return got
    return _with_leaves(expected, iter(got if isinstance(got, (tuple, list)) else (got,)))


# ------------------------------------------------------------------------------------------------ localising

def localise(cell, tensors, rtol: float, atol: float, why: str) -> dict:
    """The innermost layer whose export differs from (or fails unlike) its Cell while each of its sub-layers,
    exported alone on the inputs it received in the Cell's run, reloads equal: the cause is in that layer's own
    construct. Searched from the root down, one branch at a time; ``why``: what the whole model's export does."""
    from mindport.validators.parity.hooks import ms_hooks

    records: list[dict] = []
    try:
        with ms_hooks(cell, records):
            cell(*_fresh(tensors))
    except Exception:  # noqa: BLE001 - the whole Cell ran before: nothing to localise if hooks break it
        return {}
    first = {}
    for rec in records:
        if rec["call"] == 0:
            first.setdefault(rec["path"], rec)
    node, exported = "", 0
    with tempfile.TemporaryDirectory(prefix="mindport-export-localise-") as folder:
        while True:
            depth = node.count(".") + 1 if node else 0
            children = [p for p in first if p and p.startswith(f"{node}." if node else "") and p.count(".") == depth]
            found = None
            for child in children:
                exported += 1
                problem = _layer_problem(first[child], rtol, atol, Path(folder) / f"{exported}.mindir")
                if problem:
                    found = (child, problem)
                    break
            if found is None:
                break
            node, why = found
    layer = first[node]["layer"] if node in first else cell
    return _describe(node, layer, first.get(node), why)


def _layer_problem(record: dict, rtol: float, atol: float, path: Path) -> str:
    """Why this layer, exported alone on its recorded inputs, does not reload equal ("" when it does, or when it
    cannot be run alone: keyword or non-tensor arguments)."""
    import mindspore as ms
    import numpy as np

    from mindport.validators.parity.metrics import compare_structures

    layer, tensors = record["layer"], [ms.Tensor(a) for a in record["inputs"]]
    try:
        expected = layer(*_fresh(tensors))
        again = [np.asarray(v.asnumpy()) for _, v in _tensor_leaves(expected)]
        if len(again) != len(record["leaves"]) or not all(
                a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
                for a, b in zip(again, record["leaves"])):
            return ""  # not reproduced alone: it was called with more than its tensor arguments
    except Exception:  # noqa: BLE001
        return ""
    try:
        got = _export_and_reload(layer, tensors, expected, path)
    except Exception as exc:  # noqa: BLE001
        from mindport.validators.parity.sides import error_text

        return "its export fails: " + error_text(exc).splitlines()[0][:300]
    results, structure = compare_structures(expected, got, rtol, atol)
    bad = [r for r in results if not r.allclose]
    if not bad and structure.get("ok", True):
        return ""
    worst = max((r.max_abs for r in bad if r.max_abs is not None), default=0.0)
    return f"its reloaded export differs (max abs {worst:.3g})"


def _describe(path: str, layer, record: dict | None, why: str) -> dict:
    from mindport.validators.parity.hooks import definition_site

    site = definition_site(layer, "construct") or (record or {}).get("site", "")
    note = why + (
        "; each of its sub-layers exports equal alone" if any(True for _ in layer.cells()) else "")
    fix = ""
    updates = _in_place_updates(layer)
    if updates:
        note += (f"; it updates tensors in place (line {', '.join(updates[:5])}): MindIR keeps no "
                 "in-place update of a tensor that is not a Parameter")
        fix = "write the update out of place (x = x + y, x = ops.relu(x)) and use its result"
    return {"path": path, "type": type(layer).__name__, "site": site, "note": note, "fix": fix}


def _in_place_updates(layer) -> list[str]:
    """The lines of the in-place updates in a user layer's class (its construct and the methods it calls: a helper
    ``self.clear_first(y)`` writing ``t[:, 0] = 0.0`` into the caller's tensor): augmented assignments, item
    writes, and calls of in-place methods or of mindport.runtime.inplace functions. Also those of the classes of its
    direct sub-layers defined in the same file: a sub-layer writing into the tensor its caller hands it (``def
    construct(self, t): t[:, 0] = 0.0``) exports equal alone, and its caller's export loses the write."""
    cls = type(layer)
    found = _class_in_place_updates(cls)
    if found or getattr(cls, "construct", None) is not None:
        for kind in {type(child) for child in layer.cells()} - {cls}:
            if kind.__module__ == cls.__module__:
                found += _class_in_place_updates(kind)
    return [str(n) for n in sorted(set(found))]


def _class_in_place_updates(cls) -> list[int]:
    import ast
    import inspect
    import textwrap

    if getattr(cls, "construct", None) is None or cls.__module__.startswith(("mindspore.", "mindport.runtime")):
        return []
    try:
        lines, first = inspect.getsourcelines(cls)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = []
    for node in ast.walk(tree):
        hit = isinstance(node, ast.AugAssign) or (
            isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) for t in node.targets))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owner = node.func.value
            hit = (name.endswith("_") and not name.startswith("_")) or (
                isinstance(owner, ast.Name) and owner.id == "mp_inplace")
        if hit:
            found.append(first + node.lineno - 1)
    return found
