"""How two runs are compared: outputs of any nesting flattened to (key, array) leaves, and per-output and per-layer
error metrics at dtype-aware tolerances."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from mindport.validators.parity.results import OutputResult

# Lower bounds on the tolerances for low-precision outputs (rtol, atol).
_TOL_FLOOR = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}
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
    return [(key, obj)]


def to_numpy(value):
    """torch / MindSpore tensors, numpy values and Python numbers as numpy arrays (None stays None)."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        return np.asarray(value)
    module = type(value).__module__
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
        return res
    exact = not (np.issubdtype(ref.dtype, np.floating) or np.issubdtype(got.dtype, np.floating)
                 or np.issubdtype(ref.dtype, np.complexfloating))
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
    else:
        res.max_abs = res.mean_abs = res.max_rel = 0.0
    close = bool(np.all(diff <= atol + rtol * np.abs(r[finite]))) if diff.size else True
    res.allclose = close and res.nonfinite["same_places"]
    res.status = "match" if res.allclose else "mismatch"
    if not res.nonfinite["same_places"]:
        res.message = (f"NaN/Inf placement differs: reference nan={res.nonfinite['ref']['nan']} "
                       f"inf={res.nonfinite['ref']['inf']}, MindSpore nan={res.nonfinite['ms']['nan']} "
                       f"inf={res.nonfinite['ms']['inf']}")
    elif res.nonfinite["ref"]["nan"] or res.nonfinite["ref"]["inf"]:
        res.message = "NaN/Inf in the same places on both sides (compared on finite values)"
    return res


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 and nb == 0.0:
        return 1.0
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a.ravel(), b.ravel()) / (na * nb))


def compare_structures(ref_out, ms_out, rtol: float, atol: float) -> tuple[list[OutputResult], dict]:
    ref_kinds: dict = {}
    ms_kinds: dict = {}
    ref_flat = flatten_outputs(ref_out, kinds=ref_kinds)
    ms_flat = flatten_outputs(ms_out, kinds=ms_kinds)
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
        results.append(compare_arrays(key, to_numpy(value), to_numpy(ms_map[key]), rtol, atol))
    for key, _ in ms_flat:
        if key not in ref_map:
            results.append(OutputResult(key, "missing_in_reference", message="extra MindSpore output"))
    missing = [r.key for r in results if r.status.startswith("missing")]
    if missing:
        problems.append("outputs on one side only: " + ", ".join(missing))
    return results, {"ok": not problems, "problems": problems}


# ----------------------------------------------------------------------------------------------------------------
# Layer comparison

def layer_metrics(ref_leaves: list, ms_leaves: list, rtol: float, atol: float) -> dict:
    ref_leaves = [a for a in ref_leaves if a is not None]
    ms_leaves = [a for a in ms_leaves if a is not None]
    if len(ref_leaves) != len(ms_leaves) or any(a.shape != b.shape for a, b in zip(ref_leaves, ms_leaves)):
        shapes = lambda leaves: [tuple(a.shape) for a in leaves]  # noqa: E731
        return {"status": "shape_mismatch", "note": f"output shapes {shapes(ref_leaves)} vs {shapes(ms_leaves)}"}
    if not ref_leaves:
        return {"status": "match"}
    rtol, atol = _tolerances(ref_leaves[0], ms_leaves[0], rtol, atol)
    max_abs = scale = total = 0.0
    count = 0
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
        dot += float(np.dot(r.astype(np.float64), g.astype(np.float64))) if work is np.float64 else float(np.dot(r, g))
        nr += float(np.dot(r, r))
        ng += float(np.dot(g, g))
    if nr == 0.0 and ng == 0.0:
        cosine = 1.0
    elif nr == 0.0 or ng == 0.0:
        cosine = 0.0
    else:
        cosine = min(1.0, dot / math.sqrt(nr * ng))
    out = {"ref_scale": scale, "max_abs": max_abs, "mean_abs": total / count if count else 0.0, "cosine": cosine,
           "max_rel": max_abs / max(scale, 1e-12)}
    # A layer diverges when its worst error exceeds the tolerance relative to the tensor's own scale: errors
    # near zero in a tensor of magnitude 10 are rounding, not a bug.
    out["status"] = "match" if nan_ok and max_abs <= atol + rtol * scale else "diverged"
    if not nan_ok:
        out["note"] = "NaN/Inf placement differs"
    return out
