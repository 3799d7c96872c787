"""How two runs are compared: outputs of any nesting flattened to (key, array) leaves, and per-output, per-layer and
per-parameter error metrics at dtype-aware tolerances, with msprobe's measures and grades beside them.

msprobe (MindStudio Probe, the Ascend accuracy tool) reports, per tensor, the cosine similarity, the maximum absolute
and relative errors and the share of elements whose relative error is below 0.1 % and 0.5 % ("One Thousandth" and
"Five Thousandths Err Ratio"). A tensor fails its accuracy bar ("Accuracy Reached or Not": No) when cosine < 0.99
and max abs error > 1e-3, when cosine < 0.9, when max abs error > 1, or when NaN/Inf differ; a node is marked red
when its inputs' 0.1 % ratio is above 0.9 and its output's below 0.6, yellow when the ratio drops by more than 0.1,
the cosine drops by more than 0.1, or the max abs error (both above 1) grows by an order of magnitude from inputs to
output. :func:`grade` applies those rules; they never decide parity (the tolerances do), they say how bad it is.
Only numpy is used here: the parent process compares what the two side processes send.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import types

import numpy as np

from mindport.validators.parity.results import OutputResult

# Lower bounds on the tolerances for low-precision outputs (rtol, atol).
_TOL_FLOOR = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}

# msprobe's thresholds (docs: 10.accuracy_compare_PyTorch.md, "Accuracy Reached or Not" and the highlight rules;
# 17.grad_probe.md for the gradient sign similarity)
MSPROBE_COSINE_PASS = 0.99  # below this with max abs error > 1e-3: not reached
MSPROBE_ABS_PASS = 1e-3
MSPROBE_COSINE_FLOOR = 0.9  # below this: not reached
MSPROBE_ABS_CEILING = 1.0  # above this: not reached
MSPROBE_RATIO_IN_RED, MSPROBE_RATIO_OUT_RED = 0.9, 0.6
MSPROBE_DROP_YELLOW = 0.1  # ratio or cosine drop from inputs to output
MSPROBE_SIGN_SIMILARITY = 0.97  # gradient direction agreement below this: a problem (grad_probe)
_FLOAT_EPS = float(np.finfo(np.float64).eps)


# ----------------------------------------------------------------------------------------------------------------
# Outputs of any nesting -> flat (key, leaf) pairs

def flatten_outputs(obj, key: str = "output", kinds: dict | None = None) -> list[tuple[str, object]]:
    """Tensors/arrays/numbers are leaves; tuple, list, namedtuple (by position), dict (by key) and dataclass
    (by field) are walked. ``kinds`` (optional) receives each container's kind by key."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if kinds is not None:
            kinds[key] = "dataclass"
        out = []
        for f in dataclasses.fields(obj):
            out += flatten_outputs(getattr(obj, f.name), f"{key}.{f.name}", kinds)
        return out
    if isinstance(obj, dict):
        if kinds is not None:
            kinds[key] = "mapping"
        out = []
        for k, v in obj.items():
            out += flatten_outputs(v, f"{key}[{k!r}]", kinds)
        return out
    if isinstance(obj, (tuple, list)):
        if kinds is not None:
            kinds[key] = "sequence"
        out = []
        for i, v in enumerate(obj):
            out += flatten_outputs(v, f"{key}[{i}]", kinds)
        return out
    if isinstance(obj, (types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools.partial)):
        # a function handed back beside the tensors (lucidrains/iTransformer's RevIN returns ``rescaled,
        # reverse_fn``, a closure that undoes the normalisation): no numbers of its own to compare; the tensors are
        if kinds is not None:
            kinds[key] = "function"
        return []
    if _is_distribution(obj):  # a policy head's Categorical / Normal (RL code): the tensors that define it
        if kinds is not None:
            kinds[key] = "distribution"
        out = []
        for name in _DISTRIBUTION_PARAMETERS:
            value = getattr(obj, name, None)
            if value is not None and not callable(value):
                out += flatten_outputs(value, f"{key}.{name}", kinds)
        return out
    return [(key, obj)]


# the parameters a probability distribution is defined by (torch.distributions' ``arg_constraints`` names, which
# mindport.runtime.distributions keeps), in one order for both sides
_DISTRIBUTION_PARAMETERS = ("loc", "scale", "probs", "logits", "low", "high", "rate", "concentration",
                            "concentration0", "concentration1", "df", "total_count", "temperature", "scale_tril")


def _is_distribution(obj) -> bool:
    """A torch.distributions / mindport.runtime.distributions object (FlorianKlemt/pytorch-latent-i2a's policy heads
    return ``Categorical(logits=x)``: "'Categorical' object has no attribute 'detach'")."""
    return any(c.__module__.startswith(("torch.distributions", "mindport.runtime.distributions"))
               and c.__name__ == "Distribution" for c in type(obj).__mro__)


def to_numpy(value):
    """torch / MindSpore tensors, numpy values and Python numbers as numpy arrays (None stays None)."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        return np.asarray(value)
    # a MindSpore Parameter's type is made at run time (module "abc"): the framework is read along the class's bases
    module = next((c.__module__ for c in type(value).__mro__ if c.__module__.startswith(("torch", "mindspore"))),
                  type(value).__module__)
    if module.startswith("torch"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            return value.float().numpy()
        return value.numpy()
    if module.startswith("mindspore"):
        import mindspore as ms

        if value.dtype == ms.bfloat16:
            value = value.astype(ms.float32)
        return value.asnumpy()
    raise TypeError(f"cannot compare an output of type {type(value).__name__}")


def _dtype_name(a) -> str:
    return "None" if a is None else str(a.dtype)


def _tolerances(ref, got, rtol: float, atol: float) -> tuple[float, float]:
    for a in (ref, got):
        floor = _TOL_FLOOR.get(_dtype_name(a))
        if floor:
            rtol, atol = max(rtol, floor[0]), max(atol, floor[1])
    return rtol, atol


def _nonfinite(a: np.ndarray) -> dict:
    return {"nan": int(np.isnan(a).sum()), "inf": int(np.isinf(a).sum())}


def is_float(a) -> bool:
    return a is not None and (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.complexfloating))


def is_constant(a) -> bool:
    """A floating tensor whose elements are all equal (more than one of them), or all zero: comparing it says little
    about the code that produced it (a zero-initialised last layer, a dead branch)."""
    if not is_float(a) or a.size == 0:
        return False
    flat = np.asarray(a).ravel()
    if not np.all(np.isfinite(flat)):
        return False
    if not flat.any():
        return True
    return flat.size > 1 and bool(np.all(flat == flat[0]))


def relative_errors(r: np.ndarray, g: np.ndarray) -> np.ndarray:
    """msprobe's elementwise relative error |g - r| / |r|; where the reference is 0 both sides get a tiny epsilon,
    so 0 vs 0 is no error and anything vs 0 is a large one."""
    r = r.astype(np.float64, copy=False)
    g = g.astype(np.float64, copy=False)
    zero = r == 0
    if zero.any():
        r = np.where(zero, _FLOAT_EPS, r)
        g = np.where(zero, g + _FLOAT_EPS, g)
    return np.abs(g - r) / np.abs(r)


def error_ratios(r: np.ndarray, g: np.ndarray) -> tuple[float, float]:
    """Shares of elements whose relative error is below 0.1 % and below 0.5 % (msprobe's two "thousandth" ratios)."""
    if r.size == 0:
        return 1.0, 1.0
    rel = relative_errors(r, g)
    return float(np.mean(rel < 1e-3)), float(np.mean(rel < 5e-3))


def accuracy_reached(cosine, max_abs) -> bool:
    """msprobe's "Accuracy Reached or Not" for one tensor (NaN/Inf placement is checked by the caller)."""
    if cosine is None or max_abs is None:
        return True
    if cosine < MSPROBE_COSINE_FLOOR or max_abs > MSPROBE_ABS_CEILING:
        return False
    return not (cosine < MSPROBE_COSINE_PASS and max_abs > MSPROBE_ABS_PASS)


def grade(out: dict, inp: dict | None = None) -> tuple[str, list[str]]:
    """pass / warning / error for a tensor (``out``: cosine, max_abs, ratio_1e3, nan_ok), judged with its inputs'
    measures (``inp``) when known, by msprobe's accuracy bar and highlight rules."""
    errors, warnings = [], []
    if not out.get("nan_ok", True):
        errors.append("NaN/Inf placement differs")
    cos, mabs, ratio = out.get("cosine"), out.get("max_abs"), out.get("ratio_1e3")
    if mabs is not None and mabs > 1e10:
        errors.append("max abs error exceeds 1e10")
    if not accuracy_reached(cos, mabs):
        errors.append(f"below msprobe's accuracy bar: cosine {cos:.4g}, max abs error {mabs:.3g} (needs cosine > 0.99 "
                      "or max abs < 1e-3, cosine >= 0.9 and max abs <= 1)")
    if inp:
        icos, iabs, iratio = inp.get("cosine"), inp.get("max_abs"), inp.get("ratio_1e3")
        if iratio is not None and ratio is not None:
            if iratio > MSPROBE_RATIO_IN_RED and ratio < MSPROBE_RATIO_OUT_RED:
                errors.append(f"inputs agree (0.1 % ratio {iratio:.3f}) but the output does not ({ratio:.3f})")
            elif iratio - ratio > MSPROBE_DROP_YELLOW:
                warnings.append(f"0.1 % ratio drops from {iratio:.3f} (inputs) to {ratio:.3f} (output)")
        if icos is not None and cos is not None and icos - cos > MSPROBE_DROP_YELLOW:
            warnings.append(f"cosine drops from {icos:.4f} (inputs) to {cos:.4f} (output)")
        if iabs is not None and mabs is not None and 1 < iabs <= mabs and math.log10(mabs) - math.log10(iabs) >= 1:
            warnings.append(f"max abs error grows by an order of magnitude ({iabs:.3g} -> {mabs:.3g})")
    if errors:
        return "error", errors + warnings
    return ("warning", warnings) if warnings else ("pass", [])


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 and nb == 0.0:
        return 1.0
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a.ravel(), b.ravel()) / (na * nb))


def compare_arrays(key: str, ref, got, rtol: float, atol: float) -> OutputResult:
    res = OutputResult(key, "mismatch", ref_dtype=_dtype_name(ref), ms_dtype=_dtype_name(got))
    if ref is None or got is None:
        res.status = "match" if ref is None and got is None else "mismatch"
        res.allclose = res.status == "match"
        res.message = "" if res.allclose else "None on one side only"
        return res
    res.ref_shape, res.ms_shape = list(ref.shape), list(got.shape)
    if ref.shape != got.shape:
        res.status = "shape_mismatch"
        res.message = f"shape {tuple(ref.shape)} vs {tuple(got.shape)}"
        res.grade = "error"
        return res
    exact = not (is_float(ref) or is_float(got))
    rtol, atol = (0.0, 0.0) if exact else _tolerances(ref, got, rtol, atol)
    res.rtol, res.atol = rtol, atol
    r = ref.astype(np.float64)
    g = got.astype(np.float64)
    same_nan = np.array_equal(np.isnan(r), np.isnan(g))
    same_inf = np.array_equal(np.where(np.isinf(r), np.sign(r), 0), np.where(np.isinf(g), np.sign(g), 0))
    res.nonfinite = {"ref": _nonfinite(r), "ms": _nonfinite(g), "same_places": bool(same_nan and same_inf)}
    finite = np.isfinite(r) & np.isfinite(g)
    diff = np.abs(r[finite] - g[finite])
    if diff.size:
        res.max_abs = float(diff.max())
        res.mean_abs = float(diff.mean())
        res.max_rel = float((diff / np.maximum(np.abs(r[finite]), max(atol, 1e-12))).max())
        res.cosine = _cosine(r[finite], g[finite])
        res.ratio_1e3, res.ratio_5e3 = error_ratios(r[finite], g[finite])
    else:
        res.max_abs = res.mean_abs = res.max_rel = 0.0
    res.constant = is_constant(ref)
    close = bool(np.all(diff <= atol + rtol * np.abs(r[finite]))) if diff.size else True
    res.allclose = close and res.nonfinite["same_places"]
    res.status = "match" if res.allclose else "mismatch"
    res.grade = grade({"cosine": res.cosine, "max_abs": res.max_abs, "ratio_1e3": res.ratio_1e3,
                       "nan_ok": res.nonfinite["same_places"]})[0]
    if not res.nonfinite["same_places"]:
        res.message = (f"NaN/Inf placement differs: reference nan={res.nonfinite['ref']['nan']} "
                       f"inf={res.nonfinite['ref']['inf']}, MindSpore nan={res.nonfinite['ms']['nan']} "
                       f"inf={res.nonfinite['ms']['inf']}")
    elif res.nonfinite["ref"]["nan"] or res.nonfinite["ref"]["inf"]:
        res.message = "NaN/Inf in the same places on both sides (compared on finite values)"
    return res


def compare_structures(ref_out, ms_out, rtol: float, atol: float) -> tuple[list[OutputResult], dict]:
    """Outputs of any nesting (tensors of either framework, numpy, numbers), compared leaf by leaf."""
    ref_kinds: dict = {}
    ms_kinds: dict = {}
    ref_flat = [(k, to_numpy(v)) for k, v in flatten_outputs(ref_out, kinds=ref_kinds)]
    ms_flat = [(k, to_numpy(v)) for k, v in flatten_outputs(ms_out, kinds=ms_kinds)]
    return compare_flat(ref_flat, ref_kinds, ms_flat, ms_kinds, rtol, atol)


def _records_as_dicts(ref_kinds: dict, ms_flat: list, ms_kinds: dict) -> tuple[list, dict]:
    """The port writes a ``@dataclass`` record built in forward as a dict of its fields (the converter's
    RecordDictTransform: a graph compiles no such object): where the reference holds a dataclass and MindSpore a
    dict, the dict's string keys are the record's fields (``output['extra']['score']`` is ``output['extra'].score``),
    so the two are one structure; any other difference stays one."""
    for record in sorted((k for k, kind in ref_kinds.items() if kind == "dataclass"), key=len):
        if ms_kinds.get(record) != "mapping":
            continue
        head = record + "["

        def renamed(key: str) -> str:
            if not key.startswith(head):
                return key
            rest = key[len(head):]
            for quote in ("'", '"'):
                end = rest.find(quote + "]", 1)
                if rest.startswith(quote) and end > 0 and rest[1:end].isidentifier():
                    return f"{record}.{rest[1:end]}{rest[end + 2:]}"
            return key
        ms_flat = [(renamed(k), v) for k, v in ms_flat]
        ms_kinds = {renamed(k): kind for k, kind in ms_kinds.items()}
        ms_kinds[record] = "dataclass"
    return ms_flat, ms_kinds


def compare_flat(ref_flat, ref_kinds: dict, ms_flat, ms_kinds: dict, rtol: float, atol: float
                 ) -> tuple[list[OutputResult], dict]:
    """Flattened outputs (``[(key, array)]`` and each container's kind by key), compared leaf by leaf."""
    ms_flat, ms_kinds = _records_as_dicts(ref_kinds, ms_flat, ms_kinds)
    ms_map = dict(ms_flat)
    ref_map = dict(ref_flat)
    problems = []
    for key in sorted(ref_kinds.keys() & ms_kinds.keys()):
        if ref_kinds[key] != ms_kinds[key]:
            problems.append(f"{key}: {ref_kinds[key]} in the reference, {ms_kinds[key]} in MindSpore")
    results = []
    for key, value in ref_flat:
        if key not in ms_map:
            results.append(OutputResult(key, "missing_in_mindspore", message="no MindSpore output at this key"))
            continue
        results.append(compare_arrays(key, value, ms_map[key], rtol, atol))
    for key, _ in ms_flat:
        if key not in ref_map:
            results.append(OutputResult(key, "missing_in_reference", message="extra MindSpore output"))
    missing = [r.key for r in results if r.status.startswith("missing")]
    if missing:
        problems.append("outputs on one side only: " + ", ".join(missing))
    return results, {"ok": not problems, "problems": problems}


# ----------------------------------------------------------------------------------------------------------------
# Layer comparison

def leaves_metrics(ref_leaves: list, ms_leaves: list) -> dict | None:
    """Error measures over several tensors taken together (a layer's outputs, or its inputs); None when the two
    sides' tensors do not line up (count or shapes)."""
    ref_leaves = [a for a in ref_leaves if a is not None]
    ms_leaves = [a for a in ms_leaves if a is not None]
    if len(ref_leaves) != len(ms_leaves) or any(a.shape != b.shape for a, b in zip(ref_leaves, ms_leaves)):
        return None
    max_abs = scale = total = 0.0
    count = within_1e3 = within_5e3 = 0
    dot = nr = ng = 0.0
    nan_ok = True
    for a, b in zip(ref_leaves, ms_leaves):
        # float32 arithmetic is exact enough for error magnitudes and ~3x cheaper than float64 on large tensors
        work = np.float64 if a.dtype == np.float64 or b.dtype == np.float64 else np.float32
        r, g = a.astype(work, copy=False).ravel(), b.astype(work, copy=False).ravel()
        finite_r, finite_g = np.isfinite(r), np.isfinite(g)
        if not (finite_r.all() and finite_g.all()):
            nan_ok = nan_ok and np.array_equal(np.isnan(r), np.isnan(g)) and np.array_equal(
                np.where(np.isinf(r), np.sign(r), 0), np.where(np.isinf(g), np.sign(g), 0))
            keep = finite_r & finite_g
            r, g = r[keep], g[keep]
        if not r.size:
            continue
        diff = np.abs(r - g)
        max_abs = max(max_abs, float(diff.max()))
        scale = max(scale, float(np.abs(r).max()))
        total += float(diff.sum(dtype=np.float64))
        count += diff.size
        # msprobe's relative error below a threshold, without dividing: |g - r| < t * |r|, or no error at all
        # (where the reference is 0, only an exact 0 is within)
        absr, exact = np.abs(r), diff == 0
        within_1e3 += int(np.count_nonzero((diff < 1e-3 * absr) | exact))
        within_5e3 += int(np.count_nonzero((diff < 5e-3 * absr) | exact))
        dot += float(np.dot(r.astype(np.float64), g.astype(np.float64))) if work is np.float64 else float(np.dot(r, g))
        nr += float(np.dot(r, r))
        ng += float(np.dot(g, g))
    if nr == 0.0 and ng == 0.0:
        cosine = 1.0
    elif nr == 0.0 or ng == 0.0:
        cosine = 0.0
    else:
        cosine = min(1.0, dot / math.sqrt(nr * ng))
    return {"ref_scale": scale, "max_abs": max_abs, "mean_abs": total / count if count else 0.0, "cosine": cosine,
            "max_rel": max_abs / max(scale, 1e-12), "ratio_1e3": within_1e3 / count if count else 1.0,
            "ratio_5e3": within_5e3 / count if count else 1.0, "nan_ok": nan_ok, "size": count}


def layer_metrics(ref_leaves: list, ms_leaves: list, rtol: float, atol: float) -> dict:
    metrics = leaves_metrics(ref_leaves, ms_leaves)
    if metrics is None:
        ref_leaves = [a for a in ref_leaves if a is not None]
        ms_leaves = [a for a in ms_leaves if a is not None]
        shapes = lambda leaves: [tuple(a.shape) for a in leaves]
        return {"status": "shape_mismatch", "note": f"output shapes {shapes(ref_leaves)} vs {shapes(ms_leaves)}"}
    ref_leaves = [a for a in ref_leaves if a is not None]
    if not ref_leaves:
        return {"status": "match"}
    rtol, atol = _tolerances(ref_leaves[0], next(a for a in ms_leaves if a is not None), rtol, atol)
    out = {k: metrics[k] for k in ("ref_scale", "max_abs", "mean_abs", "cosine", "max_rel", "ratio_1e3", "ratio_5e3")}
    # A layer diverges when its worst error exceeds the tolerance relative to the tensor's own scale: errors
    # near zero in a tensor of magnitude 10 are rounding, not a bug.
    out["status"] = "match" if metrics["nan_ok"] and metrics["max_abs"] <= atol + rtol * metrics["ref_scale"] \
        else "diverged"
    out["nan_ok"] = metrics["nan_ok"]
    if not metrics["nan_ok"]:
        out["note"] = "NaN/Inf placement differs"
    return out


# ----------------------------------------------------------------------------------------------------------------
# Parameters: gradients and trained values

def param_metrics(ref: np.ndarray, got: np.ndarray, rtol: float, atol: float, signs: bool = False) -> dict:
    """One parameter tensor on both sides: errors relative to its own scale, cosine, msprobe's grade and (for
    gradients) the share of elements whose sign agrees."""
    if ref.shape != got.shape:
        return {"status": "shape_mismatch", "note": f"shape {tuple(ref.shape)} vs {tuple(got.shape)}", "grade": "error"}
    m = leaves_metrics([ref], [got])
    out = {"max_abs": m["max_abs"], "max_rel": m["max_rel"], "cosine": m["cosine"]}
    rtol, atol = _tolerances(ref, got, rtol, atol)
    tol = atol + rtol * m["ref_scale"]
    out["status"] = "match" if m["nan_ok"] and m["max_abs"] <= tol else "diverged"
    level, reasons = grade(m)
    if signs:
        out["sign_similarity"] = sign_similarity(ref, got, tol)
        if out["sign_similarity"] < MSPROBE_SIGN_SIMILARITY:
            level = "error"
            reasons = reasons + [f"gradient sign similarity {out['sign_similarity']:.3f} < {MSPROBE_SIGN_SIMILARITY}"]
    out["grade"] = level
    if reasons:
        out["note"] = "; ".join(reasons)
    return out


def sign_similarity(ref: np.ndarray, got: np.ndarray, tol: float = 0.0) -> float:
    """msprobe grad_probe's direction similarity: the share of elements whose ``> 0`` flag is the same. Elements
    within ``tol`` of zero on both sides agree whatever their sign (rounding noise around an exact zero, e.g. the
    gradient of a bias that a following normalisation cancels, has no direction)."""
    if ref.size == 0:
        return 1.0
    ref, got = np.asarray(ref), np.asarray(got)
    same = (ref > 0) == (got > 0)
    if tol > 0:
        same |= (np.abs(ref) <= tol) & (np.abs(got) <= tol)
    return float(np.mean(same))


def _float_arrays(run: dict, records: bool = True):
    stack = [run.get("outputs") or []] + ([[r.get("leaves") for r in run.get("records") or []]] if records else [])
    while stack:
        item = stack.pop()
        if isinstance(item, np.ndarray):
            if item.dtype.kind in "fc" and item.size:
                yield item
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())


def has_non_finite(run: dict) -> bool:
    """Has a forward run (a side's ``forward`` answer) an output with a NaN or an infinity?"""
    return any(not np.isfinite(a).all() for a in _float_arrays(run, records=False))


def largest_value(run: dict) -> float:
    """The largest finite magnitude of a forward run's floating outputs and recorded layer outputs (a side's
    ``forward`` answer)."""
    best = 0.0
    stack = [run.get("outputs") or [], [r.get("leaves") for r in run.get("records") or []]]
    while stack:
        item = stack.pop()
        if isinstance(item, np.ndarray):
            if item.dtype.kind in "fc" and item.size:
                finite = np.abs(item[np.isfinite(item)])
                if finite.size:
                    best = max(best, float(finite.max()))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return best
