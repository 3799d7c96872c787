"""Parity: run the torch model and its MindSpore port on the same inputs and weights, and say where they differ.

Public API (stable; the CLI and ``mindport migrate`` use it)::

    compare(torch_module, cell, inputs, rtol=1e-5, atol=1e-6, localize=True, graph_mode=True,
            transfer=True, *, grad=False, train=None, seed=0) -> ParityReport
        torch_module: a torch ``nn.Module`` or the path of a ``.onnx`` file (the reference side);
        cell: the MindSpore ``nn.Cell``; inputs: a list of numpy arrays (positional arguments).
        ``transfer=True`` copies the torch state_dict (or the ONNX initializers) into ``cell`` first.
        Both models live in the caller's process (it built them).

    validate(torch_ref, ms_ref, ctor="", weights=None, inputs=(), *, rtol=1e-5, atol=1e-6, seed=0,
             localize=True, graph_mode=True, grad=False, train_steps=0, optimizer="sgd", lr=0.01,
             optimizer_args=None, loss="mse", train_rtol=1e-4, grad_rtol=1e-4, root=None, ms_root=None,
             log_dir=None, save_weights=None) -> ParityReport
        torch_ref: a model reference ("model.py:Name", "pkg/module.py:Name", "pkg.module:Name" under ``root``)
        or "model.onnx"; ms_ref: the converted model's reference (dotted ones under ``ms_root``); ctor: the call's
        arguments as Python source, evaluated in each side's module namespace; weights: a torch checkpoint
        (.pt/.pth/.bin/.safetensors) loaded into both sides, default: the torch model's own (seeded) init;
        inputs: ``--input`` specs ("2x3x32x32:float32", "2x16:int64:0:1000", "x.npy") or numpy arrays.
        Each side runs in a process of its own (``worker.py``), with its logs in ``log_dir`` (default: a temporary
        folder, removed when the run ends). ``save_weights`` writes the MindSpore checkpoint the run used.
        Raises :class:`mindport.errors.InputError` for usage/input problems (exit code 2).

    write_reports(report, paths) -> list[Path]
        Writes each path by its suffix: ``.json`` (schema in docs/parity-report.md) or ``.html``.

``ParityReport.ok`` is True when every output matches at dtype-aware tolerances, the output structures agree,
the MindSpore model ran, GRAPH_MODE (when asked for) compiles and agrees with PyNative, no training-only trap (BatchNorm
momentum, dropout rate) was found in the layer configurations, a constant reference output was re-checked on
perturbed weights and held there, and, when asked for, gradients and training agree.

The parts: ``run.py`` runs the checks (``training.py``: gradients and training) and ``verdict.py`` decides;
``settings.py`` is what a run is asked to check.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from mindport.errors import InputError
from mindport.validators.parity.results import (
    ParityReport,
)
from mindport.validators.parity.run import _input_summary, _run
from mindport.validators.parity.settings import Settings
from mindport.validators.parity.sides import (
    LOSSES,
    OPTIMIZERS,
    LocalSide,
    OnnxSide,
    TrainSpec,
    _checked,
    both,
)

# ----------------------------------------------------------------------------------------------------------------
# compare(): models already built, in this process

def compare(torch_module, cell, inputs, rtol: float = 1e-5, atol: float = 1e-6, localize: bool = True,
            graph_mode: bool = True, transfer: bool = True, *, grad: bool = False, train: TrainSpec | None = None,
            seed: int = 0, grad_rtol: float = 1e-4) -> ParityReport:
    """Run both models on ``inputs`` and compare every output (and, with ``localize``, every layer)."""
    from mindport.validators.parity.side_mindspore import MindSporeSide
    from mindport.validators.parity.side_torch import TorchSide

    t0 = time.perf_counter()
    if isinstance(inputs, np.ndarray):
        inputs = [inputs]
    inputs = [np.asarray(a) for a in inputs]
    is_onnx = isinstance(torch_module, (str, Path))
    ref = LocalSide(OnnxSide(torch_module) if is_onnx else TorchSide(torch_module), "reference")
    ms = LocalSide(MindSporeSide(cell), "MindSpore")
    settings = Settings(rtol, atol, seed, localize, graph_mode, grad, train, grad_rtol)
    report = ParityReport()
    report.reference = {"kind": "onnx" if is_onnx else "torch",
                        "type": "onnx" if is_onnx else type(torch_module).__name__}
    if is_onnx:
        report.reference["ref"] = str(torch_module)
    report.candidate = {"kind": "mindspore", "type": type(cell).__name__}
    plan = None
    if transfer:
        plan = _apply_transfer(report, ms, state=ref.call("state"),
                               source="onnx initializers" if is_onnx else "torch model")
    else:
        report.weights = {"source": "as given (not transferred)", "ok": True}
    if not is_onnx:
        ref.call("snapshot")
    _run(report, ref, ms, inputs, settings, plan, batches=lambda step: inputs, restore=transfer and not is_onnx)
    report.settings["inputs"] = _input_summary(inputs)
    report.timings["compare_total"] = round(time.perf_counter() - t0, 4)
    return report


# ----------------------------------------------------------------------------------------------------------------
# validate(): from references, each side in a process of its own

def validate(torch_ref, ms_ref, ctor: str = "", weights=None, inputs=(), *, rtol: float = 1e-5,
             atol: float = 1e-6, seed: int = 0, localize: bool = True, graph_mode: bool = True, grad: bool = False,
             train_steps: int = 0, optimizer: str = "sgd", lr: float = 0.01, optimizer_args: dict | None = None,
             loss: str = "mse", train_rtol: float = 1e-4, grad_rtol: float = 1e-4, root=None, ms_root=None,
             log_dir=None, save_weights=None, export_to=None, before_candidate=None) -> ParityReport:
    """Build both models from their references, each in its own process, and compare them. ``export_to``: also
    export the proven Cell there as MindIR, reload and compare it (``report.export``; mindport.export).

    ``before_candidate(facts)``: called once the torch model is built and has run ``inputs`` once under
    ``mindport.observed``'s recorder, and before the MindSpore model is built, with what that run recorded under
    ``root`` (``Facts.to_json()``, or None when the forward raised): ``migrate`` converts the source there, so the
    port proven is the one written with the observed facts. The torch model is still built once."""
    from mindport.validators.parity.worker import RemoteSide

    t0 = time.perf_counter()
    specs, arrays = _resolve_inputs(inputs, seed)
    train = _train_spec(train_steps, optimizer, lr, optimizer_args, loss, train_rtol)
    settings = Settings(rtol, atol, seed, localize, graph_mode, grad, train, grad_rtol)
    ref_str = str(torch_ref)
    is_onnx = ref_str.endswith(".onnx")
    if is_onnx and not Path(ref_str).is_file():
        raise InputError(f"ONNX model {ref_str} does not exist")
    if is_onnx and (grad or train):
        raise InputError("--grad and --train-steps need a torch reference (FILE.py:Name), not an ONNX model")
    # the sides run in the log folder: every path they get is absolute (relative ones are relative to here)
    root = str(Path(root or ".").resolve())
    ms_root = str(Path(ms_root).resolve()) if ms_root is not None else root
    ref_str, ms_ref = _absolute_ref(ref_str, root), _absolute_ref(str(ms_ref), ms_root)
    weights = None if weights is None else str(Path(weights).resolve())
    save_weights = None if save_weights is None else str(Path(save_weights).resolve())
    keep_logs = log_dir is not None
    workdir = Path(log_dir).resolve() if keep_logs else Path(tempfile.mkdtemp(prefix="mindport-validate-"))
    report = ParityReport()
    ms = ref = None
    try:
        t = time.perf_counter()
        ms = RemoteSide("mindspore", workdir, "MindSpore")
        ref = LocalSide(OnnxSide(ref_str), "reference") if is_onnx else RemoteSide("torch", workdir, "torch")
        report.logs = {"folder": str(workdir), "mindspore": ms.log, **({} if is_onnx else {"torch": ref.log})}
        _checked(both, ref, ms, "hello")
        report.timings["imports"] = round(time.perf_counter() - t, 4)
        t = time.perf_counter()
        observe = before_candidate is not None and not is_onnx
        p_ref = None if is_onnx else ref.submit("build", ref_str, ctor, seed, root, observe=observe)
        if observe:  # the port is written from the torch run's facts before MindSpore builds it
            report.reference.update(_checked(p_ref.result))
            p_ref = None
            before_candidate(ref.call("observe", arrays))
        p_ms = ms.submit("build", str(ms_ref), ctor, seed, ms_root)
        if p_ref is not None:
            report.reference.update(_checked(p_ref.result))
        report.candidate.update(_checked(p_ms.result))
        report.timings["build"] = round(time.perf_counter() - t, 4)
        report.reference.update({"kind": "onnx" if is_onnx else "torch", "ref": ref_str, "ctor": ctor})
        report.reference.pop("params", None)
        report.candidate.update({"ref": str(ms_ref), "ctor": ctor})
        if is_onnx:
            report.reference["type"] = "onnx"

        if weights is not None and is_onnx:
            plan = _take_transfer(report, _checked(ms.call, "transfer", path=str(weights), source=str(weights),
                                                   save=None if save_weights is None else str(save_weights)))
        elif weights is not None:
            # the torch side reads the checkpoint (the MindSpore process never imports torch) and hands it over
            _checked(ref.call, "load_checkpoint", str(weights))
            plan = _apply_transfer(report, ms, state=ref.call("state"), source=str(weights), save=save_weights)
        else:
            if not is_onnx:
                ref.call("randomize_norms", seed)
            plan = _apply_transfer(report, ms, state=ref.call("state"),
                                   source="onnx initializers" if is_onnx else "torch model", save=save_weights)
        if not is_onnx:
            ref.call("snapshot")
        batches = (lambda step: _resolve_inputs(inputs, seed + 1 + step)[1]) if train else None
        _run(report, ref, ms, arrays, settings, plan, batches)
        if export_to is not None and not report.ms_error:  # the Cell just proven, with its weights: no second build
            report.export = _checked(ms.call, "export", str(Path(export_to).resolve()), arrays, rtol, atol,
                                     model=str(ms_ref), checkpoint=save_weights,
                                     labels=[str(s) for s in specs] if len(specs) == len(arrays) else None)
    except BaseException:
        if not keep_logs:
            _close(ref, ms)
            shutil.rmtree(workdir, ignore_errors=True)  # the error message says what went wrong
        raise
    finally:
        _close(ref, ms)
    report.settings["inputs"] = _input_summary(arrays, specs if len(specs) == len(arrays) else None)
    report.settings["seed"] = seed
    report.timings["validate_total"] = round(time.perf_counter() - t0, 4)
    if not keep_logs:  # a folder per run in the system's temp dir piles up (34 after a day of checks)
        shutil.rmtree(workdir, ignore_errors=True)
        report.logs = {}
    return report


def _close(*sides) -> None:
    for side in sides:
        if side is not None:
            side.close()


def _absolute_ref(ref: str, root: str) -> str:
    """``path/model.py:Name`` (or a package folder) with an absolute path; dotted references stay as they are."""
    target, sep, name = ref.rpartition(":")
    if not sep:
        return ref
    path = Path(target)
    if target.endswith(".py") or path.is_dir():
        if not path.is_absolute() and not path.exists() and (Path(root) / path).exists():
            path = Path(root) / path
        return f"{path.resolve()}:{name}"
    return ref


def _train_spec(steps: int, optimizer: str, lr: float, optimizer_args, loss: str, rtol: float) -> TrainSpec | None:
    if not steps:
        return None
    if steps < 0:
        raise InputError(f"--train-steps {steps}: give a positive number of steps")
    if optimizer not in OPTIMIZERS:
        raise InputError(f"--optimizer {optimizer!r}: one of {', '.join(OPTIMIZERS)}")
    if loss not in LOSSES:
        raise InputError(f"--loss {loss!r}: one of {', '.join(LOSSES)}")
    if not lr > 0:
        raise InputError(f"--lr {lr}: give a positive learning rate")
    return TrainSpec(steps, optimizer, lr, dict(optimizer_args or {}), loss, rtol)


def parse_optimizer_args(text: str) -> dict:
    """``"momentum=0.9, weight_decay=0.01"`` -> a dict of literals (nothing is evaluated)."""
    import ast

    if not text or not text.strip():
        return {}
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        if call.args:
            raise ValueError("positional arguments")
        return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    except (SyntaxError, ValueError) as exc:
        raise InputError(f"--optimizer-args {text!r}: expected keyword=literal pairs, e.g. "
                         f"\"momentum=0.9, weight_decay=1e-4\" ({exc})") from None


def _resolve_inputs(inputs, seed: int):
    from mindport.validators.parity.loading import (
        InputSpec,
        make_inputs,
        parse_input_spec,
    )

    if not inputs:
        raise InputError("give at least one input (--input SHAPE:DTYPE, e.g. 2x3x32x32:float32)")
    specs, arrays = [], []
    for item in inputs:
        if isinstance(item, np.ndarray):
            arrays.append(item)
            specs.append(f"array {item.shape}:{item.dtype}")
            continue
        spec = item if isinstance(item, InputSpec) else parse_input_spec(str(item))
        arrays.extend(make_inputs([spec], seed=seed + len(arrays)))
        specs.append(str(spec))
    return specs, arrays


def _apply_transfer(report: ParityReport, ms, state: dict, source: str, save=None) -> list[dict]:
    answer = _checked(ms.call, "transfer", state=state, source=source,
                      save=None if save is None else str(save))
    return _take_transfer(report, answer)


def _take_transfer(report: ParityReport, answer: dict) -> list[dict]:
    report.weights = answer["info"]
    report.diagnostics += answer["diagnostics"]
    return answer["plan"]


# ----------------------------------------------------------------------------------------------------------------
# The reports

def write_reports(report: ParityReport, paths) -> list[Path]:
    """Write ``report`` to every path, as JSON (``.json``) or a self-contained HTML page (``.html``/``.htm``)."""
    from mindport.validators.parity import report as render

    if isinstance(paths, (str, Path)):
        paths = [paths]
    written = []
    for p in paths:
        path = Path(p)
        suffix = path.suffix.lower()
        if suffix not in (".json", ".html", ".htm"):
            raise InputError(f"--report {p}: the suffix must be .json or .html")
        path.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".json":
            render.write_json(report, path)
        else:
            render.write_html(report, path)
        written.append(path)
    return written
