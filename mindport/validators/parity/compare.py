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
        folder, kept only when something failed). ``save_weights`` writes the MindSpore checkpoint the run used.
        Raises :class:`mindport.errors.InputError` for usage/input problems (exit code 2).

    write_reports(report, paths) -> list[Path]
        Writes each path by its suffix: ``.json`` (schema in docs/parity-report.md) or ``.html``.

``ParityReport.ok`` is True when every output matches at dtype-aware tolerances, the output structures agree,
the MindSpore model ran, GRAPH_MODE (when asked for) compiles and agrees with PyNative, no training-only trap (BatchNorm
momentum, dropout rate) was found in the layer configurations, a constant reference output was re-checked on
perturbed weights and held there, and, when asked for, gradients and training agree.
"""
from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mindport.errors import Diagnostic, InputError
from mindport.validators.parity.results import (
    GradReport,
    GraphResult,
    ParityReport,
    TensorComparison,
    TrainReport,
)
from mindport.validators.parity.sides import (
    LOSSES,
    OPTIMIZERS,
    LocalSide,
    OnnxSide,
    SideError,
    TrainSpec,
    both,
)

_PROJECTION_SEED = 7919  # the gradient check's random output weights: seed + this
_TARGET_SEED = 104729  # the training targets of step k: seed + this + k


@dataclass
class Settings:
    rtol: float = 1e-5
    atol: float = 1e-6
    seed: int = 0
    localize: bool = True
    graph_mode: bool = True
    grad: bool = False
    train: TrainSpec | None = None
    grad_rtol: float = 1e-4  # gradients sum over the batch and every position: float32 rounding grows with them


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
             log_dir=None, save_weights=None, export_to=None) -> ParityReport:
    """Build both models from their references, each in its own process, and compare them. ``export_to``: also
    export the proven Cell there as MindIR, reload and compare it (``report.export``; mindport.export)."""
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
        p_ref = None if is_onnx else ref.submit("build", ref_str, ctor, seed, root)
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
        if export_to is not None:  # the Cell just proven, with the weights it was proven with: no second build
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
    if not keep_logs and report.ok:
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


def _checked(fn, *args, **kwargs):
    """A side's answer; a side that crashed while building or loading is an input problem (exit code 2)."""
    try:
        return fn(*args, **kwargs)
    except SideError as exc:
        raise InputError(f"the {exc.side} side failed: {exc.message}") from exc


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


def _input_summary(inputs, specs=None) -> list[dict]:
    out = []
    for i, a in enumerate(inputs):
        item = {"shape": list(a.shape), "dtype": str(a.dtype)}
        if specs is not None and i < len(specs):
            item["spec"] = str(specs[i])
        out.append(item)
    return out


def _apply_transfer(report: ParityReport, ms, state: dict, source: str, save=None) -> list[dict]:
    answer = _checked(ms.call, "transfer", state=state, source=source,
                      save=None if save is None else str(save))
    return _take_transfer(report, answer)


def _take_transfer(report: ParityReport, answer: dict) -> list[dict]:
    report.weights = answer["info"]
    report.diagnostics += answer["diagnostics"]
    return answer["plan"]


# ----------------------------------------------------------------------------------------------------------------
# One run: forward (and its re-run on perturbed weights), graph mode, gradients, training

def _run(report: ParityReport, ref, ms, inputs: list, s: Settings, plan, batches, restore: bool = False) -> None:
    """``restore``: give both models their starting weights back afterwards (``compare``: the caller's models)."""
    t0 = time.perf_counter()
    report.settings.update({"rtol": s.rtol, "atol": s.atol, "seed": s.seed, "localize": s.localize,
                            "graph_mode": s.graph_mode, "grad": s.grad, "grad_rtol": s.grad_rtol,
                            "train": dataclasses.asdict(s.train) if s.train else None,
                            "inputs": _input_summary(inputs)})
    ref_run, ms_run = _forward(ref, ms, inputs, s)
    report.timings["reference_forward"] = ref_run.get("seconds")
    report.timings["mindspore_forward"] = ms_run.get("seconds")
    t = time.perf_counter()
    _assess(report, ref_run, ms_run, s)
    report.timings["localize"] = round(time.perf_counter() - t, 4)

    perturbed = _check_vacuous(report, ref, ms, inputs, s, ref_run, can_perturb=plan is not None)

    if s.graph_mode and not report.ms_error and ms_run.get("outputs") is not None:
        report.graph = _graph(ms, inputs, ms_run, s)
        report.timings["graph"] = report.graph.seconds
    if s.grad and not report.ms_error:
        if plan is None:
            plan = ms.call("plan", {k: (v.shape, v.dtype) for k, v in ref.call("state").items()})
        report.grad = _grad_parity(report, ref, ms, inputs, s, ref_run, plan)
        if perturbed:
            report.grad.weights = "perturbed"
        report.timings["grad"] = report.grad.seconds
    if s.train is not None and not report.ms_error:
        if perturbed:
            ref.call("restore")
            _checked(ms.call, "transfer", state=ref.call("state"), source="torch model (restored)")
        report.train = _train_parity(ref, ms, s, ref_run, plan or [], batches)
        report.timings["train"] = report.train.seconds
    if restore and (perturbed or report.train is not None):
        ref.call("restore")
        _checked(ms.call, "transfer", state=ref.call("state"), source="torch model (restored)")
    _finish(report, s)
    report.timings["compare"] = round(time.perf_counter() - t0, 4)


def _forward(ref, ms, inputs, s: Settings) -> tuple[dict, dict]:
    p_ref, p_ms = ref.submit("forward", inputs, s.localize), ms.submit("forward", inputs, s.localize)
    try:
        ref_run = _checked(p_ref.result)
    except BaseException:
        _forward_answer(p_ms)
        raise
    ms_run = _forward_answer(p_ms)
    if ref_run.get("error"):
        shapes = ", ".join(f"{tuple(a.shape)}:{a.dtype}" for a in inputs)
        raise InputError(f"the reference model raised on the given inputs ({shapes}): {ref_run['error']}")
    return ref_run, ms_run


def _forward_answer(pending) -> dict:
    try:
        return pending.result()
    except SideError as exc:  # the MindSpore process died while running the port: a parity failure
        return {"error": exc.message, "records": [], "started": [], "outputs": None}


def _assess(report: ParityReport, ref_run: dict, ms_run: dict, s: Settings) -> None:
    """Outputs, structure and layers of one forward run on both sides, into ``report``."""
    from mindport.validators.parity.localize import drift_note, localize_layers
    from mindport.validators.parity.metrics import compare_flat

    if ms_run.get("error"):
        report.ms_error = ms_run["error"]
        report.diagnostics.append(Diagnostic("MP401", "the MindSpore model raised: " + report.ms_error.splitlines()[0],
                                             file="<parity>"))
    if ms_run.get("outputs") is not None:
        report.outputs, report.structure = compare_flat(ref_run["outputs"], ref_run["kinds"], ms_run["outputs"],
                                                        ms_run["kinds"], s.rtol, s.atol)
    for p in report.structure["problems"]:
        report.diagnostics.append(Diagnostic("MP402", "output structure: " + p, file="<parity>"))
    ref_records, ms_records = ref_run.get("records"), ms_run.get("records") or []
    if ref_records is not None:
        report.layers = localize_layers(ref_records, ms_records, s.rtol, s.atol)
        report.first_divergent = next((lr for lr in report.layers if lr.role == "cause"), None)
        for lr in report.layers:
            for c in lr.causes:
                report.config_findings.append({"path": lr.path, "call": lr.call, **c})
    elif not s.localize:
        report.localization = "disabled"
    else:
        report.localization = "layer localisation needs a torch reference (an ONNX graph has no module paths)"
    fd = report.first_divergent
    if fd is not None and fd.status == "missing_in_mindspore" and report.ms_error:
        # the cell that raised: the innermost one that started and never returned
        done = {(r["path"], r["call"]) for r in ms_records}
        open_calls = [tuple(key) for key in ms_run.get("started", []) if tuple(key) not in done]
        by_key = {(lr.path, lr.call): lr for lr in report.layers}
        if open_calls and open_calls[-1] in by_key:
            fd = report.first_divergent = by_key[open_calls[-1]]
            fd.role = "cause"
        fd.note = "the MindSpore model raised inside this layer: " + report.ms_error.splitlines()[0]
        if ms_run.get("error_site"):
            fd.ms_site = ms_run["error_site"]  # the statement that raised
    if report.first_divergent is None and report.layers:
        blocking = [lr for lr in report.layers if any(c["training_only"] for c in lr.causes)]
        if blocking:
            report.first_divergent = blocking[0]
    if report.first_divergent is None and report.layers and any(not o.allclose for o in report.outputs):
        report.drift = drift_note(report.layers)
    if report.first_divergent is not None:
        _attach_statements(report.first_divergent)
    report.ok = _forward_ok(report)


def _attach_statements(lr) -> None:
    """The first divergent layer's statements on both sides and the ``# mindport:`` comments on the converted one."""
    from mindport.validators.parity.localize import statement_at

    site = lr.ms_site or lr.ms_def
    if site:
        _, lr.ms_diagnostics = statement_at(site)


def _forward_ok(report: ParityReport) -> bool:
    training_only = any(c["training_only"] for c in report.config_findings)
    return (not report.ms_error and bool(report.outputs) and report.structure["ok"]
            and all(o.allclose for o in report.outputs) and not training_only)


def _check_vacuous(report: ParityReport, ref, ms, inputs, s: Settings, ref_run: dict, can_perturb: bool = True
                   ) -> bool:
    """A constant reference output (or layer) proves nothing: perturb the parameters that made it so and compare
    again. Returns True when the weights on both sides are now the perturbed ones. ``can_perturb`` is False when
    the MindSpore weights were given as they are (``compare(..., transfer=False)``): they cannot follow torch's."""
    from mindport.validators.parity.metrics import is_constant

    outputs = [key for key, a in ref_run["outputs"] if a is not None and is_constant(a)]
    layers = [lr.path for lr in report.layers if lr.constant]
    if not outputs and not layers:
        return False
    report.vacuous = {"constant_outputs": outputs, "constant_layers": layers, "perturbed_parameters": [],
                      "resolved": False}
    what = ", ".join(outputs) if outputs else "layer " + ", ".join(p or "<root>" for p in layers[:5])
    from mindport.validators.parity.localize import _inside

    # the innermost constant layers: a parent is constant because a sub-layer is (the root, because its last layer is)
    innermost = [p for p in dict.fromkeys(layers) if not any(q != p and _inside(q, p) for q in layers)]
    chosen = ref.call("perturb", innermost, s.seed + 1) if innermost and can_perturb else []
    if not chosen and outputs and can_perturb:
        # nothing constant inside the constant layers: every constant parameter of the model
        chosen = ref.call("perturb", None, s.seed + 1)
    report.vacuous["perturbed_parameters"] = chosen
    if not chosen:
        report.vacuous["note"] = (f"the reference's {what} is constant and no constant parameter explains it: "
                                  "that comparison proves little")
        report.diagnostics.append(Diagnostic("MP404", report.vacuous["note"], file="<parity>",
                                             severity="error" if outputs else "warning"))
        return False
    _checked(ms.call, "transfer", state=ref.call("state"), source="torch model (perturbed)")
    sub = ParityReport(reference=report.reference, candidate=report.candidate)
    ref2, ms2 = _forward(ref, ms, inputs, s)
    _assess(sub, ref2, ms2, s)
    still = [key for key, a in ref2["outputs"] if a is not None and is_constant(a)]
    report.vacuous["resolved"] = not still
    report.perturbed = sub
    verdict = "parity" if sub.ok else "divergence"
    report.vacuous["note"] = (f"the reference's {what} is constant at these weights (comparing constants proves "
                              f"little); re-checked with seeded perturbations of {', '.join(chosen[:6])}"
                              f"{' ...' if len(chosen) > 6 else ''}: {verdict}")
    if still:
        report.vacuous["note"] += f"; {', '.join(still)} still constant"
    report.diagnostics.append(Diagnostic("MP404", report.vacuous["note"], file="<parity>", severity="warning"))
    return True


def _graph(ms, inputs, ms_run: dict, s: Settings) -> GraphResult:
    from mindport.validators.parity.metrics import compare_flat

    res = GraphResult()
    try:
        answer = ms.call("graph", inputs)
    except SideError as exc:
        answer = {"error": exc.message, "location": ""}
    res.seconds = answer.get("seconds")
    if "error" in answer:
        res.status, res.error, res.location = "failed", answer["error"], answer.get("location", "")
        return res
    res.compiled = True
    results, structure = compare_flat(ms_run["outputs"], ms_run["kinds"], answer["outputs"], answer["kinds"],
                                      s.rtol, s.atol)
    res.equal_to_pynative = structure["ok"] and all(r.allclose for r in results)
    maxes = [r.max_abs for r in results if r.max_abs is not None]
    res.max_abs = max(maxes) if maxes else None
    res.status = "ok" if res.equal_to_pynative else "mismatch"
    return res


# ----------------------------------------------------------------------------------------------------------------
# Gradients and training, matched through the weight map

def _by_torch_name(plan: list[dict]) -> dict[str, dict]:
    return {item["sources"][-1]: item for item in plan if len(item["sources"]) == 1}


def _to_ms_layout(array: np.ndarray, item: dict) -> np.ndarray:
    if not item["transform"]:
        return array
    from mindport.mappings.transforms import WEIGHT_TRANSFORMS

    return WEIGHT_TRANSFORMS[item["transform"]](array, tuple(item["shape"]))


def _compare_params(ref_values: dict, ms_values: dict, plan: list[dict], rtol: float, atol: float,
                    signs: bool) -> list[TensorComparison]:
    from mindport.validators.parity.metrics import param_metrics

    by_torch = _by_torch_name(plan)
    out = []
    for name, value in ref_values.items():
        layer = name.rpartition(".")[0]
        item = by_torch.get(name)
        if item is None:
            out.append(TensorComparison(name, "", layer, list(value.shape), "not_compared",
                                        note="no single MindSpore parameter in the weight map"))
            continue
        got = ms_values.get(item["name"])
        if got is None:
            out.append(TensorComparison(name, item["name"], layer, list(value.shape), "missing_in_mindspore",
                                        note="MindSpore has no trainable parameter of this name"))
            continue
        try:
            value = _to_ms_layout(value, item)
        except Exception as exc:  # noqa: BLE001 - a transform that does not apply to this tensor
            out.append(TensorComparison(name, item["name"], layer, list(value.shape), "not_compared",
                                        note=f"weight transform {item['transform']}: {exc}"))
            continue
        m = param_metrics(value, got, rtol, atol, signs=signs)
        out.append(TensorComparison(name, item["name"], layer, list(value.shape), m.pop("status"), **m))
    return out


def _layer_order(records: list[dict] | None) -> dict[str, int]:
    order: dict[str, int] = {}
    for index, rec in enumerate(records or []):
        order.setdefault(rec["path"], index)
    return order


def _owner_index(layer: str, order: dict[str, int]) -> int:
    path = layer
    while True:
        if path in order:
            return order[path]
        if not path:
            return len(order)
        path = path.rpartition(".")[0]


def _grad_parity(report: ParityReport, ref, ms, inputs, s: Settings, ref_run: dict, plan) -> GradReport:
    from mindport.validators.parity.metrics import is_float

    res = GradReport()
    start = time.perf_counter()
    rng = np.random.default_rng(s.seed + _PROJECTION_SEED)
    projections = {key: rng.standard_normal(a.shape).astype(a.dtype) for key, a in ref_run["outputs"]
                   if a is not None and is_float(a) and a.dtype != np.float16}
    p_ref, p_ms = ref.submit("grads", inputs, projections), ms.submit("grads", inputs, projections)
    try:
        ref_grads = _checked(p_ref.result)
    except BaseException:
        _forward_answer(p_ms)
        raise
    try:
        ms_grads = p_ms.result()
    except (SideError, InputError) as exc:
        res.note = f"MindSpore could not differentiate the port: {getattr(exc, 'message', str(exc))}"
        res.seconds = round(time.perf_counter() - start, 4)
        return res
    res.loss = {"torch": ref_grads["loss"], "mindspore": ms_grads["loss"]}
    params = _compare_params(ref_grads["grads"], ms_grads["grads"], plan, s.grad_rtol, s.atol, signs=True)
    order = _layer_order(ref_run.get("records"))
    # backward order: the parameters of the layer nearest the output first
    params.sort(key=lambda p: -_owner_index(p.layer, order))
    res.params = params
    compared = [p for p in params if p.sign_similarity is not None]
    sizes = [int(np.prod(p.shape)) or 1 for p in compared]
    if compared:
        res.sign_similarity = float(sum(p.sign_similarity * n for p, n in zip(compared, sizes)) / sum(sizes))
    res.first_divergent = next((p for p in params if p.diverged), None)
    if res.first_divergent is not None:
        res.layer = _layer_info(report, res.first_divergent.layer)
    res.ok = bool(compared) and res.first_divergent is None
    if not compared:
        res.note = "no gradient could be matched through the weight map"
    res.seconds = round(time.perf_counter() - start, 4)
    return res


def _layer_info(report: ParityReport, path: str) -> dict:
    """The layer owning a parameter: its types and source statements on both sides."""
    from mindport.validators.parity.localize import statement_at

    lr = next((x for x in report.layers if x.path == path), None)
    info = {"path": path}
    if lr is not None:
        info.update({"torch_type": lr.torch_type, "ms_type": lr.ms_type, "torch_site": lr.torch_site or lr.torch_def,
                     "ms_site": lr.ms_site or lr.ms_def})
        if info["ms_site"]:
            info["ms_diagnostics"] = statement_at(info["ms_site"])[1]
    return info


def _train_parity(ref, ms, s: Settings, ref_run: dict, plan, batches) -> TrainReport:
    from mindport.validators.parity.metrics import is_float

    spec = s.train
    res = TrainReport(steps=spec.steps, rtol=spec.rtol)
    start = time.perf_counter()
    floats = [(k, a) for k, a in ref_run["outputs"] if a is not None and is_float(a)]
    if not floats:
        res.note = "the model has no floating output to train on"
        return res
    batch_list, targets = [], []
    for step in range(spec.steps):
        batch_list.append(batches(step))
        rng = np.random.default_rng(s.seed + _TARGET_SEED + step)
        if spec.loss == "cross_entropy":
            key, a = floats[0]
            targets.append([(key, rng.integers(0, a.shape[-1], size=a.shape[:-1]).astype(np.int64))])
        else:
            targets.append([(k, rng.standard_normal(a.shape).astype(a.dtype)) for k, a in floats])
    initial = ref.call("state")
    p_ref, p_ms = ref.submit("train", batch_list, targets, spec), ms.submit("train", batch_list, targets, spec)
    try:
        ref_out = _checked(p_ref.result)
    except BaseException:
        _forward_answer(p_ms)
        raise
    try:
        ms_out = p_ms.result()
    except (SideError, InputError) as exc:
        res.note = f"MindSpore could not train the port: {getattr(exc, 'message', str(exc))}"
        res.seconds = round(time.perf_counter() - start, 4)
        return res
    res.optimizer = {"torch": ref_out["optimizer"], "mindspore": ms_out["optimizer"], "lr": spec.lr,
                     "args": spec.optimizer_args}
    res.loss = {"torch": ref_out["loss"], "mindspore": ms_out["loss"]}
    lt, lm = ref_out["losses"], ms_out["losses"]
    res.losses = {"torch": lt, "mindspore": lm}
    res.rel_diff = [abs(m - t) / max(abs(t), 1e-12) for t, m in zip(lt, lm)]
    res.max_rel_diff = max(res.rel_diff) if res.rel_diff else None
    res.first_divergent_step = next((i for i, d in enumerate(res.rel_diff) if not d <= spec.rtol), None)
    floats_only = {k: v for k, v in ref_out["state"].items() if is_float(v)}  # not num_batches_tracked
    res.weights = _compare_params(floats_only, ms_out["state"], plan, spec.rtol, s.atol, signs=False)
    trainable = set(ref_out.get("trainable", ()))
    for w in res.weights:
        if w.name in initial and initial[w.name].shape == floats_only[w.name].shape:
            w.update = float(np.max(np.abs(floats_only[w.name] - initial[w.name]), initial=0.0))
        if w.status == "diverged" and w.name in trainable and w.grade != "error":
            # Adaptive optimizers turn rounding noise in a gradient that is ~0 (an attention key bias, a weight the
            # loss barely sees) into steps of up to lr: beyond the tolerance, within msprobe's accuracy bar.
            w.status = "drift"
            w.note = ("beyond rtol, within msprobe's accuracy bar (cosine > 0.99 or max abs < 1e-3): rounding noise "
                      "the optimizer amplified where the gradient is ~0")
    diverged = [w for w in res.weights if w.diverged]
    res.ok = res.first_divergent_step is None and not diverged and len(lt) == len(lm) == spec.steps
    if diverged:
        res.note = f"{len(diverged)} parameter(s) differ after training, first: {diverged[0].name}"
    drifted = [w.name for w in res.weights if w.status == "drift"]
    if drifted:
        res.note = (res.note + "; " if res.note else "") + (
            f"{len(drifted)} trained parameter(s) drift within msprobe's bar: {', '.join(drifted[:4])}")
    res.seconds = round(time.perf_counter() - start, 4)
    return res


# ----------------------------------------------------------------------------------------------------------------
# The verdict

def _finish(report: ParityReport, s: Settings) -> None:
    if report.graph.status == "failed":
        loc = report.graph.location
        report.diagnostics.append(Diagnostic(
            "MP403", "GRAPH_MODE failed: " + (report.graph.error.splitlines() or [""])[0],
            file=loc.rpartition(":")[0] or "<graph>", line=int(loc.rpartition(":")[2] or 0) if loc else 0,
            suggestion="see docs: static-graph restrictions (no try/except, numpy, ...); --no-graph skips this check"))
    elif report.graph.status == "mismatch":
        report.diagnostics.append(Diagnostic("MP403", "GRAPH_MODE outputs differ from PyNative", file="<graph>"))
    for o in report.outputs:
        if not o.allclose and not o.status.startswith("missing"):
            report.diagnostics.append(Diagnostic(
                "MP401", f"{o.key}: {o.message or o.status} (max abs {o.max_abs or 0:.3g}, max rel {o.max_rel or 0:.3g})",
                file="<parity>"))
    ok = _forward_ok(report) and report.graph.status not in ("mismatch", "failed")
    if report.vacuous:
        if report.perturbed is not None:
            ok = ok and report.perturbed.ok and (report.vacuous["resolved"] or not report.vacuous["constant_outputs"])
        elif report.vacuous["constant_outputs"]:
            ok = False  # comparing constants never passes alone
    if report.grad is not None:
        ok = ok and report.grad.ok
        g = report.grad.first_divergent
        if g is not None:
            report.diagnostics.append(Diagnostic(
                "MP405", f"gradient of {g.name} differs (cosine {g.cosine:.4g}, sign similarity "
                         f"{g.sign_similarity:.3f}): first divergent parameter in backward order, layer {g.layer or '<root>'}",
                **_site_fields(report.grad.layer.get("ms_site", "")), api=g.name))
        elif not report.grad.ok:
            report.diagnostics.append(Diagnostic("MP405", report.grad.note or "gradients not compared", file="<parity>"))
    if report.train is not None:
        ok = ok and report.train.ok
        if not report.train.ok:
            t = report.train
            where = (f"step {t.first_divergent_step}: loss {t.losses['torch'][t.first_divergent_step]:.6g} vs "
                     f"{t.losses['mindspore'][t.first_divergent_step]:.6g}") if t.first_divergent_step is not None \
                else (t.note or "final weights differ")
            report.diagnostics.append(Diagnostic("MP406", f"training diverges at {where}", file="<parity>"))
    report.ok = ok
    fd = report.first_divergent
    if fd is not None and not report.ok:
        report.diagnostics.append(Diagnostic(
            "MP401", f"first divergent layer: {fd.path or '<root>'} ({fd.torch_type} -> {fd.ms_type or '?'})",
            **_site_fields(fd.ms_site or fd.ms_def), api=fd.path, suggestion=fd.cause))
    elif report.drift and not report.ok:
        report.diagnostics.append(Diagnostic("MP401", report.drift, file="<parity>"))


def _site_fields(site: str) -> dict:
    file, _, line = site.rpartition(":")
    if not file or not line.isdigit():
        return {"file": "<parity>"}
    return {"file": file, "line": int(line)}


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
