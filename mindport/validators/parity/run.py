"""One parity run: the forward pass on both sides (and its re-run on perturbed weights when the reference output is
constant), the outputs assessed, GRAPH_MODE against PyNative, then the gradient and training checks and the
verdict."""
from __future__ import annotations

import dataclasses
import time

from mindport.errors import Diagnostic, InputError
from mindport.validators.parity.loading import describe_input, is_array
from mindport.validators.parity.results import (
    GraphResult,
    ParityReport,
)
from mindport.validators.parity.settings import Settings
from mindport.validators.parity.sides import (
    SideError,
    _checked,
    _forward_answer,
)
from mindport.validators.parity.training import _grad_parity, _train_parity
from mindport.validators.parity.verdict import _decide, _finish, _forward_divergences


def _input_summary(inputs, specs=None) -> list[dict]:
    out = []
    for i, a in enumerate(inputs):
        item = {"shape": list(a.shape), "dtype": str(a.dtype)} if is_array(a) else {"value": describe_input(a)}
        if specs is not None and i < len(specs):
            item["spec"] = str(specs[i])
        out.append(item)
    return out


def _run(report: ParityReport, ref, ms, inputs: list, s: Settings, plan, batches, restore: bool = False) -> None:
    """``restore``: give both models their starting weights back afterwards (``compare``: the caller's models)."""
    t0 = time.perf_counter()
    report.settings.update({"rtol": s.rtol, "atol": s.atol, "seed": s.seed, "localize": s.localize,
                            "graph_mode": s.graph_mode, "grad": s.grad, "grad_rtol": s.grad_rtol,
                            "train": dataclasses.asdict(s.train) if s.train else None,
                            "inputs": _input_summary(inputs)})
    before = _digest(ref)
    report.settings["replayed_draws"] = share_draws(ref, ms, inputs)
    start = None  # the state both sides' compared forwards start from, when the forward writes it
    if before is not None and _digest(ref) != before:
        # the eval forward wrote the model's own state (a data-aware initialisation on the first batch, NODE's
        # ODST drawing thresholds with np.random.beta; a lazily filled buffer): each side would initialise with its
        # own draws. Both are compared from the state torch's first forward left (the MindSpore model has not run)
        report.settings["replayed_draws"] = share_draws(ref, ms, inputs)
        start = ref.call("state")
        _checked(ms.call, "transfer", state=start, source="torch model (after its first forward)")
        report.settings["state_from_first_forward"] = True
    ref_run, ms_run = _forward(ref, ms, inputs, s)
    report.timings["reference_forward"] = ref_run.get("seconds")
    report.timings["mindspore_forward"] = ms_run.get("seconds")
    t = time.perf_counter()
    _assess(report, ref_run, ms_run, s)
    report.timings["localize"] = round(time.perf_counter() - t, 4)

    # GRAPH_MODE at the weights of the PyNative run it is compared with: before the vacuity check, which may leave
    # perturbed weights in the Cell (a constant Parameter the model returns, CTGAN's sigma, then differed)
    if s.graph_mode and not report.ms_error and ms_run.get("outputs") is not None:
        if start is not None:
            # a forward that writes the model's state at every call (a spectral norm's power iteration, a counter:
            # heykeetae/Self-Attention-GAN's SpectralNorm), which the PyNative run just did: GRAPH_MODE from the
            # state that run started from, else it compares the next step with this one
            _checked(ms.call, "transfer", state=start, source="torch model (the PyNative run's start)")
        report.graph = _graph(ms, inputs, ms_run, s)
        report.timings["graph"] = report.graph.seconds

    perturbed = _check_vacuous(report, ref, ms, inputs, s, ref_run, can_perturb=plan is not None)
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


def _torch_reference(ref) -> bool:
    """Whether the reference side is a torch model (an ONNX reference keeps no state and draws nothing)."""
    return getattr(ref, "kind", None) == "torch" or type(getattr(ref, "impl", None)).__name__ == "TorchSide"


def _digest(ref) -> str | None:
    """The torch side's state digest (None for another reference: an ONNX model keeps no state)."""
    return ref.call("digest") if _torch_reference(ref) else None


def share_draws(ref, ms, inputs) -> int:
    """A forward that draws random values is proven on one stream of draws (``mindport.proofs.replay``): the torch
    side draws from a fixed stream and records, one forward here gives the tape, and every later MindSpore model call
    replays it (a port that draws otherwise fails: "the draw sequence diverged at draw k"). The number of draws (0:
    a forward that draws nothing, the MindSpore side then draws as it does). An ONNX reference draws nothing."""
    if not _torch_reference(ref):
        return 0
    ref.call("replay_draws", True)
    if _checked(ref.call, "forward", inputs, False).get("error"):
        tape = []  # the forward below reports it
    else:
        tape = ref.call("draws")
    ms.call("use_draws", tape)
    return len(tape)


def _forward(ref, ms, inputs, s: Settings) -> tuple[dict, dict]:
    p_ref, p_ms = ref.submit("forward", inputs, s.localize), ms.submit("forward", inputs, s.localize)
    try:
        ref_run = _checked(p_ref.result)
    except BaseException:
        _forward_answer(p_ms)
        raise
    ms_run = _forward_answer(p_ms)
    if ref_run.get("error"):
        shapes = ", ".join(describe_input(a) for a in inputs)
        raise InputError(f"the reference model raised on the given inputs ({shapes}): {ref_run['error']}")
    return ref_run, ms_run


def _assess(report: ParityReport, ref_run: dict, ms_run: dict, s: Settings) -> None:
    """Outputs, structure and layers of one forward run on both sides, into ``report``."""
    from mindport.validators.parity.localize import drift_note, localize_layers
    from mindport.validators.parity.metrics import compare_flat

    if ms_run.get("error"):
        report.ms_error, report.ms_error_site = ms_run["error"], ms_run.get("error_site", "")
        file, _, line = report.ms_error_site.rpartition(":")
        report.diagnostics.append(Diagnostic("MP401", "the MindSpore model raised: " + report.ms_error.splitlines()[0],
                                             **({"file": file, "line": int(line)} if line.isdigit() else
                                                {"file": "<parity>"})))
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
        blocking = [lr for lr in report.layers if lr.causes]  # a known trap in the settings: the cause
        if blocking:
            report.first_divergent = blocking[0]
    if report.first_divergent is None and report.layers and any(not o.allclose for o in report.outputs):
        report.drift = drift_note(report.layers)
    if report.first_divergent is not None:
        _attach_statements(report.first_divergent)
    _decide(report, _forward_divergences(report), "")


def _attach_statements(lr) -> None:
    """The first divergent layer's statements on both sides and the ``# mindport:`` comments on the converted one."""
    from mindport.validators.parity.localize import statement_at

    site = lr.ms_site or lr.ms_def
    if site:
        _, lr.ms_diagnostics = statement_at(site)


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
        # nothing constant inside the constant layers: every constant parameter of the model, else every parameter
        # (an output constant by construction, a loss term that is 0 in eval mode, is re-checked all the same)
        chosen = ref.call("perturb", None, s.seed + 1) or ref.call("perturb", None, s.seed + 1, every=True)
    report.vacuous["perturbed_parameters"] = chosen
    varying = [key for key, a in ref_run["outputs"] if a is not None and key not in outputs]
    if not chosen and outputs and varying and can_perturb and not _float_state(ref.call("state")):
        return _recheck_inputs(report, ref, ms, inputs, s, what)
    if not chosen:
        why = "the reference has no parameter mindport can perturb" if can_perturb else \
            "its weights were given as they are"
        report.vacuous["note"] = (f"the reference's {what} is constant and cannot be re-checked on perturbed "
                                  f"weights ({why})" + (": inconclusive" if outputs else ""))
        report.diagnostics.append(Diagnostic("MP404", report.vacuous["note"], file="<parity>", severity="warning"))
        return False
    _checked(ms.call, "transfer", state=ref.call("state"), source="torch model (perturbed)")
    sub = ParityReport(reference=report.reference, candidate=report.candidate)
    ref2, ms2 = _forward(ref, ms, inputs, s)
    from mindport.validators.parity.metrics import has_non_finite

    if has_non_finite(ref2) and not has_non_finite(ref_run) and chosen:
        # the perturbation made the reference itself non-finite: a parameter read as a variance drawn negative
        # (consistency_models' inception Conv2dLayer hands Parameters ``mean``/``var``, zeros at init, to
        # F.batch_norm: the square root of a negative is NaN, which relu keeps in torch and makes 0 in MindSpore).
        # That compares NaNs, not the port: the same parameters are drawn again, positive
        ref.call("perturb", None, s.seed + 1, names=chosen, positive=True)
        _checked(ms.call, "transfer", state=ref.call("state"), source="torch model (perturbed, positive)")
        ref2, ms2 = _forward(ref, ms, inputs, s)
        report.vacuous["positive"] = True
    if s.atol_per_unit is not None:
        # the tolerance of these weights, not the constant output's: consistency_models' inception Conv2dLayer is 0
        # everywhere at its zero init (atol 1e-6), its perturbed output reaches 5, and float32 rounding of that
        # (5.7e-6 at an output near 0 after the relu) "differed"
        from mindport.validators.parity.metrics import largest_value

        s = dataclasses.replace(s, atol=max(s.atol, s.atol_per_unit * max(1.0, largest_value(ref2))))
        sub.settings["atol"] = s.atol
    _assess(sub, ref2, ms2, s)
    still = [key for key, a in ref2["outputs"] if a is not None and is_constant(a)]
    report.vacuous["resolved"] = not still
    report.perturbed = sub
    verdict = "they match" if sub.ok else "they differ"
    report.vacuous["note"] = (f"the reference's {what} is constant at these weights (comparing constants proves "
                              f"little); re-checked with seeded perturbations of {', '.join(chosen[:6])}"
                              f"{' ...' if len(chosen) > 6 else ''}: {verdict}")
    if still:
        report.vacuous["note"] += f"; {', '.join(still)} still constant"
    report.diagnostics.append(Diagnostic("MP404", report.vacuous["note"], file="<parity>", severity="warning"))
    return True


def _float_state(state: dict) -> list[str]:
    """The floating point parameters and buffers of a state: what a weight draw could change (an integer buffer, a
    permutation or an index table, is structure)."""
    import numpy as np

    return [k for k, v in state.items() if np.issubdtype(np.asarray(v).dtype, np.floating)]


def _other_inputs(inputs: list, seed: int) -> list | None:
    """A second draw of the floating point inputs (another seed, twice the spread, shifted); integer and boolean
    inputs (tokens, indices, masks) stay. None when no input is floating point."""
    import numpy as np

    rng = np.random.default_rng(seed)
    other = [(rng.standard_normal(a.shape) * 2.0 + 0.5).astype(a.dtype)
             if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating) else a for a in inputs]
    return other if any(o is not a for o, a in zip(other, inputs)) else None


def _recheck_inputs(report: ParityReport, ref, ms, inputs, s: Settings, what: str) -> bool:
    """A constant output beside others that are not, of a model with no parameter and no floating point buffer
    (pytorch-flows' ``Shuffle``, whose only buffers are its permutation, returns a zero log-determinant beside the
    permuted input): no weight made it constant, so no weight
    can be perturbed; the comparison is re-run on a second input draw. (A model whose every output is constant and
    that has no weight stays inconclusive: it computes nothing from its input to compare.) An output the new inputs change is compared there; one constant on
    both draws is a constant of the model's own code, compared as a value (resolved). Returns False: the weights are
    the ones they were."""
    from mindport.validators.parity.metrics import is_constant

    other = _other_inputs(inputs, s.seed + 1)
    if other is None:
        report.vacuous["note"] = (f"the reference's {what} is constant, the model has no parameter or buffer and no "
                                  "floating point input to draw again: inconclusive")
        report.diagnostics.append(Diagnostic("MP404", report.vacuous["note"], file="<parity>", severity="warning"))
        return False
    sub = ParityReport(reference=report.reference, candidate=report.candidate)
    ref2, ms2 = _forward(ref, ms, other, s)
    _assess(sub, ref2, ms2, s)
    still = [key for key, a in ref2["outputs"] if a is not None and is_constant(a)]
    report.perturbed = sub
    report.vacuous["perturbed_inputs"] = True
    report.vacuous["resolved"] = True
    report.vacuous["note"] = (f"the reference's {what} is constant and the model has no parameter or floating "
                              f"point buffer to perturb; re-checked on a second input draw: {'they match' if sub.ok else 'they differ'}"
                              + (f"; {', '.join(still)} constant on it too: a constant of the model's code, compared "
                                 "as a value" if still else ""))
    report.diagnostics.append(Diagnostic("MP404", report.vacuous["note"], file="<parity>", severity="warning"))
    return False


def _graph(ms, inputs, ms_run: dict, s: Settings) -> GraphResult:
    from mindport.validators.parity.metrics import compare_flat

    res = GraphResult()
    try:
        answer = ms.call("graph", inputs)
    except SideError as exc:
        answer = {"error": exc.message, "location": ""}
    res.seconds = answer.get("seconds")
    if "skipped" in answer:
        res.error = answer["skipped"]
        return res
    if "error" in answer:
        res.status, res.error, res.location = "failed", answer["error"], answer.get("location", "")
        return res
    res.compiled = True
    res.note = answer.get("note", "")
    results, structure = compare_flat(ms_run["outputs"], ms_run["kinds"], answer["outputs"], answer["kinds"],
                                      s.rtol, s.atol)
    res.equal_to_pynative = structure["ok"] and all(r.allclose for r in results)
    maxes = [r.max_abs for r in results if r.max_abs is not None]
    res.max_abs = max(maxes) if maxes else None
    res.status = "ok" if res.equal_to_pynative else "mismatch"
    return res
