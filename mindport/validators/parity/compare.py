"""Parity: run the torch model and its MindSpore port on the same inputs and weights, and say where they differ.

Public API (stable; the CLI and ``mindport migrate`` use it)::

    compare(torch_module, cell, inputs, rtol=1e-5, atol=1e-6, localize=True, graph_mode=True,
            transfer=True) -> ParityReport
        torch_module: a torch ``nn.Module`` or the path of a ``.onnx`` file (the reference side);
        cell: the MindSpore ``nn.Cell``; inputs: a list of numpy arrays (positional arguments).
        ``transfer=True`` copies the torch state_dict (or the ONNX initializers) into ``cell`` first.

    validate(torch_ref, ms_ref, ctor="", weights=None, inputs=(), *, rtol=1e-5, atol=1e-6, seed=0,
             localize=True, graph_mode=True) -> ParityReport
        torch_ref: "model.py:Name" or "model.onnx"; ms_ref: "converted/model.py:Name"; ctor: the call's
        arguments as Python source, evaluated in each side's module namespace; weights: a torch checkpoint
        (.pt/.pth/.bin/.safetensors) loaded into both sides, default: the torch model's own (seeded) init;
        inputs: ``--input`` specs ("2x3x32x32:float32", "2x16:int64:0:1000", "x.npy") or numpy arrays.
        Raises :class:`mindport.errors.InputError` for usage/input problems (exit code 2).

    write_reports(report, paths) -> list[Path]
        Writes each path by its suffix: ``.json`` (schema in docs/parity-report.md) or ``.html``.

``ParityReport.ok`` is True when every output matches at dtype-aware tolerances, the output structures agree,
the MindSpore model ran, graph mode (when it compiles) agrees with PyNative, and no training-only trap
(BatchNorm momentum, dropout rate) was found in the layer configurations.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from mindport.errors import Diagnostic, InputError, MigrationError
from mindport.validators.parity.metrics import layer_metrics, compare_structures, flatten_outputs, to_numpy
from mindport.validators.parity.results import GraphResult, LayerResult, ParityReport

def _is_ancestor_of_all_divergent(path: str, results: list[LayerResult]) -> bool:
    """True when every earlier divergent layer lies inside ``path`` (so ``path`` diverging is no news)."""
    return all(path == "" or r.path.startswith(path + ".") for r in results if r.diverged)


def localize_layers(ref_records, ms_records, rtol: float, atol: float) -> list[LayerResult]:
    from mindport.validators.parity.localize import (config_differences, find_traps, ms_config, torch_config,
                                              types_correspond)

    ms_by_key = {(r.path, r.call): r for r in ms_records}
    results: list[LayerResult] = []
    for index, rec in enumerate(ref_records):
        ms_rec = ms_by_key.get((rec.path, rec.call))
        tcfg = torch_config(rec.layer)
        if ms_rec is None:
            lr = LayerResult(index, rec.path, rec.call, rec.type_name, "", "missing_in_mindspore", torch_config=tcfg,
                             note="no MindSpore cell ran at this path (it raised earlier, or was renamed)")
            results.append(lr)
            continue
        mcfg = ms_config(ms_rec.layer)
        metrics = layer_metrics(rec.leaves, ms_rec.leaves, rtol, atol)
        lr = LayerResult(index, rec.path, rec.call, rec.type_name, ms_rec.type_name, metrics.pop("status"),
                         torch_config=tcfg, ms_config=mcfg, note=metrics.pop("note", ""), **metrics)
        if not types_correspond(rec.layer, ms_rec.layer):
            lr.note = (lr.note + "; " if lr.note else "") + f"types differ: {rec.type_name} vs {ms_rec.type_name}"
        lr.causes = [dataclasses.asdict(f) for f in find_traps(rec.type_name, tcfg, mcfg)]
        earlier = any(r.diverged for r in results)
        if lr.diverged and not lr.causes and earlier and not _is_ancestor_of_all_divergent(rec.path, results):
            lr.note = ((lr.note + "; ") if lr.note else "") + "follows an earlier divergence"
        elif lr.diverged and not lr.causes:
            children = [r for r in results if r.path.startswith(rec.path + ".") or (rec.path == "" and r.path)]
            if children and not any(c.diverged for c in children):
                lr.note = ((lr.note + "; ") if lr.note else "") + (
                    "every sub-layer matched: the difference comes from this layer's own forward code "
                    "(functional calls between its sub-layers)")
            elif not children:
                diffs = config_differences(tcfg, mcfg)
                lr.note = ((lr.note + "; ") if lr.note else "") + (
                    "settings differ: " + "; ".join(diffs) if diffs else "no known trap matches these settings")
        results.append(lr)
    return results


# ----------------------------------------------------------------------------------------------------------------
# Running the two sides

class OnnxReference:
    """An exported ``.onnx`` model as the reference side, run by ``onnx.reference.ReferenceEvaluator``."""

    def __init__(self, path):
        import onnx

        self.path = str(path)
        try:
            self.model = onnx.load(self.path)
        except Exception as exc:
            raise InputError(f"{path}: not a readable ONNX model ({type(exc).__name__}: {exc})") from exc
        init_names = {i.name for i in self.model.graph.initializer}
        self.input_names = [i.name for i in self.model.graph.input if i.name not in init_names]
        self.output_names = [o.name for o in self.model.graph.output]

    def initializers(self) -> dict[str, np.ndarray]:
        from onnx import numpy_helper

        return {i.name: numpy_helper.to_array(i) for i in self.model.graph.initializer}

    def run(self, inputs: list[np.ndarray]):
        from onnx.reference import ReferenceEvaluator

        if len(inputs) != len(self.input_names):
            raise InputError(f"{self.path} takes {len(self.input_names)} input(s) ({', '.join(self.input_names)}), "
                             f"got {len(inputs)}")
        outs = ReferenceEvaluator(self.model).run(None, dict(zip(self.input_names, inputs)))
        return outs[0] if len(outs) == 1 else tuple(outs)


def _run_torch(module, inputs, records=None):
    import torch

    from mindport.validators.parity.localize import torch_hooks

    module.eval()
    args = [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs]
    with torch.no_grad():
        if records is None:
            return module(*args)
        with torch_hooks(module, records):
            return module(*args)


def _ms_tensors(inputs):
    import mindspore as ms

    return [ms.Tensor(np.ascontiguousarray(a)) for a in inputs]


def _sync(out):
    # PyNative runs asynchronously: converting every leaf surfaces a failing op here, inside the try
    return [(k, to_numpy(v)) for k, v in flatten_outputs(out)]


def _error_text(exc: BaseException, limit: int = 1200) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip() and not set(ln.strip()) <= set("-")]
    keep = []
    for ln in lines:
        if "C++ Call Stack" in ln:
            continue
        keep.append(ln)
    return "\n".join(keep)[:limit]


def _graph_location(text: str) -> str:
    import re

    found = re.findall(r"# In file (.+?):(\d+)", text)
    return f"{found[-1][0]}:{found[-1][1]}" if found else ""


def _run_graph(cell, inputs, pynative_out, rtol, atol) -> GraphResult:
    import mindspore as ms

    res = GraphResult()
    start = time.perf_counter()
    previous = ms.get_context("mode")
    try:
        ms.set_context(mode=ms.GRAPH_MODE)
        out = cell(*_ms_tensors(inputs))
        _sync(out)
        res.compiled = True
    except Exception as exc:  # noqa: BLE001 - any compile/run failure is a finding, not a crash
        res.status = "failed"
        res.error = _error_text(exc)
        res.location = _graph_location(str(exc))
        return res
    finally:
        ms.set_context(mode=previous)
        res.seconds = round(time.perf_counter() - start, 4)
    results, structure = compare_structures(pynative_out, out, rtol, atol)
    res.equal_to_pynative = structure["ok"] and all(r.allclose for r in results)
    maxes = [r.max_abs for r in results if r.max_abs is not None]
    res.max_abs = max(maxes) if maxes else None
    res.status = "ok" if res.equal_to_pynative else "mismatch"
    return res


def _input_summary(inputs, specs=None) -> list[dict]:
    out = []
    for i, a in enumerate(inputs):
        item = {"shape": list(a.shape), "dtype": str(a.dtype)}
        if specs is not None and i < len(specs):
            item["spec"] = str(specs[i])
        out.append(item)
    return out


def _transfer(state, cell, source: str) -> tuple[dict, list[Diagnostic]]:
    from mindport.migrator.weights import transfer_weights

    try:
        rep = transfer_weights(state, cell, strict=False)
    except MigrationError as exc:
        return {"source": source, "ok": False, "error": str(exc)}, list(exc.diagnostics)
    info = {"source": source, "ok": rep.ok, "transferred": len(rep.mapping), "missing": list(rep.missing),
            "unexpected": list(rep.unexpected), "dropped": list(rep.dropped)}
    diags = [dataclasses.replace(d, severity="warning") for d in rep.diagnostics]
    return info, diags


def compare(torch_module, cell, inputs, rtol: float = 1e-5, atol: float = 1e-6, localize: bool = True,
            graph_mode: bool = True, transfer: bool = True) -> ParityReport:
    """Run both models on ``inputs`` and compare every output (and, with ``localize``, every layer)."""
    import mindspore as ms

    from mindport.validators.parity.localize import ms_hooks

    t0 = time.perf_counter()
    if isinstance(inputs, np.ndarray):
        inputs = [inputs]
    inputs = [np.asarray(a) for a in inputs]
    if isinstance(torch_module, (str, Path)):
        torch_module = OnnxReference(torch_module)
    is_onnx = isinstance(torch_module, OnnxReference)
    report = ParityReport()
    report.settings = {"rtol": rtol, "atol": atol, "localize": localize, "graph_mode": graph_mode,
                       "inputs": _input_summary(inputs)}
    report.reference = {"kind": "onnx" if is_onnx else "torch",
                        "type": "onnx" if is_onnx else type(torch_module).__name__}
    report.candidate = {"kind": "mindspore", "type": type(cell).__name__}
    if is_onnx:
        report.reference["ref"] = torch_module.path

    if transfer:
        if is_onnx:
            state = {k: v for k, v in torch_module.initializers().items() if not k.startswith("onnx::")}
            source = "onnx initializers"
        else:
            state = torch_module.state_dict()
            source = "torch model"
        report.weights, diags = _transfer(state, cell, source)
        report.diagnostics += diags
    else:
        report.weights = {"source": "as given (not transferred)", "ok": True}

    # reference side
    t = time.perf_counter()
    ref_records = [] if localize and not is_onnx else None
    try:
        ref_out = torch_module.run(inputs) if is_onnx else _run_torch(torch_module, inputs, ref_records)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"the reference model raised on the given inputs "
                         f"({', '.join(f'{tuple(a.shape)}:{a.dtype}' for a in inputs)}): {_error_text(exc, 600)}"
                         ) from exc
    report.timings["reference_forward"] = round(time.perf_counter() - t, 4)

    # MindSpore side, PyNative
    t = time.perf_counter()
    previous = ms.get_context("mode")
    ms_records = [] if ref_records is not None else None
    ms_started: list[tuple[str, int]] = []
    ms_out = None
    cell.set_train(False)
    try:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        if ms_records is None:
            ms_out = cell(*_ms_tensors(inputs))
            _sync(ms_out)
        else:
            with ms_hooks(cell, ms_records, ms_started):
                ms_out = cell(*_ms_tensors(inputs))
                _sync(ms_out)
    except Exception as exc:  # noqa: BLE001 - the port raising is a parity failure, reported
        report.ms_error = _error_text(exc)
        ms_out = None
        report.diagnostics.append(Diagnostic("MP401", "the MindSpore model raised: " + report.ms_error.splitlines()[0],
                                             file="<parity>"))
    finally:
        ms.set_context(mode=previous)
    report.timings["mindspore_forward"] = round(time.perf_counter() - t, 4)

    if ms_out is not None:
        report.outputs, report.structure = compare_structures(ref_out, ms_out, rtol, atol)
    if not report.structure["ok"]:
        for p in report.structure["problems"]:
            report.diagnostics.append(Diagnostic("MP402", "output structure: " + p, file="<parity>"))

    # localisation
    t = time.perf_counter()
    if ref_records is not None:
        report.layers = localize_layers(ref_records, ms_records, rtol, atol)
        report.first_divergent = next((lr for lr in report.layers if lr.diverged), None)
        for lr in report.layers:
            for c in lr.causes:
                report.config_findings.append({"path": lr.path, "call": lr.call, **c})
    elif is_onnx:
        report.localization = "layer localisation needs a torch reference (an ONNX graph has no module paths)"
    else:
        report.localization = "disabled"
    report.timings["localize"] = round(time.perf_counter() - t, 4)
    fd = report.first_divergent
    if fd is not None and fd.status == "missing_in_mindspore" and report.ms_error:
        # the cell that raised: the innermost one that started and never returned
        done = {(r.path, r.call) for r in ms_records or ()}
        open_calls = [key for key in ms_started if key not in done]
        by_key = {(lr.path, lr.call): lr for lr in report.layers}
        if open_calls and open_calls[-1] in by_key:
            fd = report.first_divergent = by_key[open_calls[-1]]
        fd.note = "the MindSpore model raised inside this layer: " + report.ms_error.splitlines()[0]
    if report.first_divergent is None and report.layers:
        blocking = [lr for lr in report.layers if any(c["training_only"] for c in lr.causes)]
        if blocking:
            report.first_divergent = blocking[0]

    # graph mode
    if graph_mode and ms_out is not None:
        report.graph = _run_graph(cell, inputs, ms_out, rtol, atol)
        report.timings["graph"] = report.graph.seconds
        if report.graph.status == "failed":
            report.diagnostics.append(Diagnostic(
                "MP403", "GRAPH_MODE failed: " + (report.graph.error.splitlines() or [""])[0],
                file=report.graph.location.rpartition(":")[0] or "<graph>",
                line=int(report.graph.location.rpartition(":")[2] or 0) if report.graph.location else 0,
                severity="warning", suggestion="see docs: static-graph restrictions (no try/except, numpy, ...)"))

    for o in report.outputs:
        if not o.allclose and not o.status.startswith("missing"):
            report.diagnostics.append(Diagnostic(
                "MP401", f"{o.key}: {o.message or o.status} (max abs {o.max_abs or 0:.3g}, max rel {o.max_rel or 0:.3g})",
                file="<parity>"))
    training_only = any(c["training_only"] for c in report.config_findings)
    report.ok = (not report.ms_error and bool(report.outputs) and report.structure["ok"]
                 and all(o.allclose for o in report.outputs) and report.graph.status != "mismatch"
                 and not training_only)
    if report.first_divergent is not None and not report.ok:
        fd = report.first_divergent
        report.diagnostics.append(Diagnostic(
            "MP401", f"first divergent layer: {fd.path or '<root>'} ({fd.torch_type} -> {fd.ms_type or '?'})",
            file="<parity>", api=fd.path, suggestion=fd.cause))
    report.timings["compare_total"] = round(time.perf_counter() - t0, 4)
    return report


# ----------------------------------------------------------------------------------------------------------------
# validate(): from file references and input specs

def _resolve_inputs(inputs, seed: int):
    from mindport.validators.parity.loading import InputSpec, make_inputs, parse_input_spec

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


def _randomize_norm_statistics(module, seed: int) -> None:
    """Seeded, non-trivial running statistics, so that normalisation settings (eps) show in the outputs."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for sub in module.modules():
            mean, var = getattr(sub, "running_mean", None), getattr(sub, "running_var", None)
            if isinstance(mean, torch.Tensor) and isinstance(var, torch.Tensor):
                mean.copy_(torch.randn(mean.shape, generator=gen) * 0.1)
                var.copy_(torch.rand(var.shape, generator=gen) * 0.5 + 0.02)


def validate(torch_ref, ms_ref, ctor: str = "", weights=None, inputs=(), *, rtol: float = 1e-5,
             atol: float = 1e-6, seed: int = 0, localize: bool = True, graph_mode: bool = True) -> ParityReport:
    """Build both models from ``FILE.py:Name`` references (or an ``.onnx`` reference) and :func:`compare`."""
    t0 = time.perf_counter()
    specs, arrays = _resolve_inputs(inputs, seed)
    t = time.perf_counter()
    import mindspore as ms
    import torch

    from mindport.validators.parity.loading import build_model
    from mindport.validators.parity.localize import record_constructor_args
    from mindport.migrator.weights import load_state_dict

    import_seconds = time.perf_counter() - t
    ref_str = str(torch_ref)
    is_onnx = ref_str.endswith(".onnx")
    t = time.perf_counter()
    if is_onnx:
        if not Path(ref_str).is_file():
            raise InputError(f"ONNX model {ref_str} does not exist")
        reference = OnnxReference(ref_str)
    else:
        torch.manual_seed(seed)
        reference = build_model(ref_str, ctor)
        if not isinstance(reference, torch.nn.Module):
            raise InputError(f"{ref_str}({ctor}) built a {type(reference).__name__}, not a torch.nn.Module")
    ms.set_seed(seed)
    with record_constructor_args():
        cell = build_model(str(ms_ref), ctor)
    if not isinstance(cell, ms.nn.Cell):
        raise InputError(f"{ms_ref}({ctor}) built a {type(cell).__name__}, not a mindspore.nn.Cell")
    build_seconds = time.perf_counter() - t

    weight_source = None
    if weights is not None:
        state = load_state_dict(weights)
        weight_source = str(weights)
        if not is_onnx:
            try:
                reference.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=True)
            except RuntimeError as exc:
                raise InputError(f"{weights} does not fit the torch model {ref_str}: {exc}") from exc
    elif not is_onnx:
        _randomize_norm_statistics(reference, seed)

    if weights is not None:
        winfo, wdiags = _transfer(state, cell, weight_source)
        report = compare(reference, cell, arrays, rtol=rtol, atol=atol, localize=localize, graph_mode=graph_mode,
                         transfer=False)
        report.weights, report.diagnostics = winfo, wdiags + report.diagnostics
    else:
        report = compare(reference, cell, arrays, rtol=rtol, atol=atol, localize=localize, graph_mode=graph_mode)
    report.reference.update({"ref": ref_str, "ctor": ctor})
    report.candidate.update({"ref": str(ms_ref), "ctor": ctor})
    report.settings["inputs"] = _input_summary(arrays, specs if len(specs) == len(arrays) else None)
    report.settings["seed"] = seed
    report.timings["imports"] = round(import_seconds, 4)
    report.timings["build"] = round(build_seconds, 4)
    report.timings["validate_total"] = round(time.perf_counter() - t0, 4)
    return report


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
