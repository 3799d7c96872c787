"""Gradients and training compared, matched through the weight map: the first parameter whose gradient diverges (in
backward order), and the first training step whose loss diverges, with the layer behind each."""
from __future__ import annotations

import time

import numpy as np

from mindport.errors import InputError
from mindport.validators.parity.noise import NOISE_FACTOR, rel, within_noise
from mindport.validators.parity.results import (
    GradReport,
    ParityReport,
    TensorComparison,
    TrainReport,
)
from mindport.validators.parity.settings import _PROJECTION_SEED, _TARGET_SEED, Settings
from mindport.validators.parity.sides import (
    SideError,
    _checked,
    _forward_answer,
)


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
    control = None
    if res.first_divergent_step is not None or any(w.status == "diverged" for w in res.weights):
        control = ref.call("train", batch_list, targets, spec, initial)  # is it float32 noise? (noise.py)
        lc = control["losses"]
        res.control = {"float64_losses": lc, "float32_vs_float64": [rel(t, c) for t, c in zip(lt, lc)]}
        quiet = within_noise(lt, lc, lm)
        res.first_divergent_step = next((i for i, (d, q) in enumerate(zip(res.rel_diff, quiet))
                                         if not (d <= spec.rtol or q)), None)
    trainable = set(ref_out.get("trainable", ()))
    for w in res.weights:
        if w.name in initial and initial[w.name].shape == floats_only[w.name].shape:
            w.update = float(np.max(np.abs(floats_only[w.name] - initial[w.name]), initial=0.0))
        if w.status == "diverged" and control is not None and w.name in control["state"] and w.max_abs is not None:
            noise = float(np.max(np.abs(floats_only[w.name] - control["state"][w.name]), initial=0.0))
            if w.max_abs <= NOISE_FACTOR * noise:  # as far from torch as float32 rounding alone takes torch
                w.status = "drift"
                w.note = (f"within float32 noise: torch's float32 and float64 runs differ by {noise:.2g} here "
                          "(the float64 control)")
                continue
        if w.status == "diverged" and w.name in trainable and w.grade != "error":
            # Adaptive optimizers turn rounding noise in a gradient that is ~0 (an attention key bias, a weight the
            # loss barely sees) into steps of up to lr: beyond the tolerance, within msprobe's accuracy bar.
            w.status = "drift"
            w.note = ("beyond rtol, within msprobe's accuracy bar (cosine > 0.99 or max abs < 1e-3): rounding noise "
                      "the optimizer amplified where the gradient is ~0")
    diverged = [w for w in res.weights if w.diverged]
    res.ok = res.first_divergent_step is None and not diverged and len(lt) == len(lm) == spec.steps
    if control is not None and res.first_divergent_step is None and res.max_rel_diff > spec.rtol:
        res.note = (f"losses beyond rtol {spec.rtol:g} within float32 noise: torch's own float32 run differs from "
                    f"float64 by up to {max(res.control['float32_vs_float64']):.2g} (the float64 control)")
    if diverged:
        res.note = f"{len(diverged)} parameter(s) differ after training, first: {diverged[0].name}"
    drifted = [w.name for w in res.weights if w.status == "drift"]
    if drifted:
        res.note = (res.note + "; " if res.note else "") + (
            f"{len(drifted)} trained parameter(s) drift within msprobe's bar: {', '.join(drifted[:4])}")
    res.seconds = round(time.perf_counter() - start, 4)
    return res
