"""Running a case: the torch snippet converted by the real converter, both frameworks run on the same inputs, values,
dtypes, shapes and in-place effects compared (:func:`run_case`); every case of an entry (:func:`sweep_entry`)."""
from __future__ import annotations

import contextlib
import io
import re
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from mindport.mappings import Entry, Registry
from mindport.proofs.function import _flatten, _load
from mindport.proofs.differential.generation import Case, Outcome, cases
from mindport.proofs.differential.inputs import make_inputs


def _to_numpy(value):
    if hasattr(value, "detach"):
        value = value.detach().resolve_conj().resolve_neg()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return np.asarray(value)


def _torch_value(a, noncontiguous: bool):
    import torch

    if not isinstance(a, np.ndarray):
        return a
    if noncontiguous and a.ndim >= 2:
        return torch.tensor(np.ascontiguousarray(a.swapaxes(-1, -2))).transpose(-1, -2)
    return torch.tensor(a)


def _ms_value(a, noncontiguous: bool):
    import mindspore as ms

    if not isinstance(a, np.ndarray):
        return a
    if noncontiguous and a.ndim >= 2:
        return ms.Tensor(np.ascontiguousarray(a.swapaxes(-1, -2))).swapaxes(-1, -2)
    return ms.Tensor(a.copy())


def _half_reference(case: Case, t_mod, arrays: dict, noncontiguous: bool):
    """torch's float32 result on the same (float16) values: the reference float16 results are compared with."""
    import torch

    up = {n: a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float16 else a
          for n, a in arrays.items()}
    with torch.no_grad():
        return _run_torch(case, t_mod, up, noncontiguous)[0]


def _run_torch(case: Case, t_mod, arrays, noncontiguous):
    import torch

    if case.layer:
        state = torch.random.get_rng_state()
        torch.manual_seed(0)  # the same initial weights in every run
        layer = t_mod.build()
        torch.random.set_rng_state(state)
        layer.train(case.train)
        args = [_torch_value(arrays[n], noncontiguous) for n in case.call]
        if any(isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in args):
            layer = layer.double()
        elif any(isinstance(a, torch.Tensor) and a.dtype == torch.float16 for a in args):
            layer = layer.half()
        with torch.no_grad():
            return layer(*args), args, layer
    args = [_torch_value(arrays[n], noncontiguous) for n, _ in case.specs]
    with torch.no_grad():
        return t_mod.run(*args), args, None


def _run_ms(case: Case, m_mod, arrays, noncontiguous, t_layer):
    if case.layer:
        from mindport.migrator.weights import transfer_weights

        layer = m_mod.build()
        layer.set_train(case.train)
        if t_layer is not None:
            state = {k: v.float() if v.is_floating_point() else v for k, v in t_layer.state_dict().items()}
            if state:
                transfer_weights(state, layer)
        args = [_ms_value(arrays[n], noncontiguous) for n in case.call]
        dtypes = {str(a.dtype) for a in args if hasattr(a, "asnumpy")}
        if "Float64" in dtypes or "Float16" in dtypes:  # torch's layer.double() / .half()
            import mindspore as ms

            dtype = ms.float64 if "Float64" in dtypes else ms.float16
            for p in layer.get_parameters():
                if p.dtype in (ms.float32, ms.float64, ms.float16):
                    p.set_dtype(dtype)
        return layer(*args), args
    args = [_ms_value(arrays[n], noncontiguous) for n, _ in case.specs]
    return m_mod.run(*args), args


_CONVERTED: dict[str, tuple[str, list[str]]] = {}


def convert(torch_code: str) -> tuple[str, list[str]]:
    """(MindSpore code, diagnostics) from the real converter; memoised per snippet."""
    if torch_code not in _CONVERTED:
        from mindport.migrator import convert_source

        result = convert_source(torch_code, "<differential>")
        _CONVERTED[torch_code] = (result.code, [d.format() for d in result.diagnostics])
    return _CONVERTED[torch_code]


def _compare(case: Case, t_out, m_out, half_ref) -> Outcome | None:
    t_leaves, m_leaves = _flatten(t_out), _flatten(m_out)
    if len(t_leaves) != len(m_leaves):
        return Outcome("count", f"torch returned {len(t_leaves)} values, MindSpore {len(m_leaves)}")
    ref_leaves = _flatten(half_ref) if half_ref is not None else [None] * len(t_leaves)
    for i, (t, m, r) in enumerate(zip(t_leaves, m_leaves, ref_leaves)):
        t, m = _to_numpy(t), _to_numpy(m)
        if t.shape != m.shape:
            return Outcome("shape", f"output {i}: shape {t.shape} (torch) != {m.shape} (MindSpore)")
        if t.dtype != m.dtype and not (t.dtype.kind in "US" and m.dtype.kind in "US"):
            return Outcome("dtype", f"output {i}: dtype {t.dtype} (torch) != {m.dtype} (MindSpore)")
        if case.compare == "shape" or t.size == 0:
            continue
        if t.dtype.kind in "USO" or m.dtype.kind in "USO":  # strings (x.type()), Python objects
            if not np.array_equal(t, m):
                return Outcome("value", f"output {i}: {t!r} (torch) != {m!r} (MindSpore)")
            continue
        rtol, atol = case.rtol, case.atol
        if t.dtype in (np.float32, np.complex64) and m.dtype in (np.float32, np.complex64):
            atol = max(atol, 1e-5)  # an example's tolerance may be tighter than float32 arithmetic on other inputs
        if t.dtype == np.float16 or case.variant == "float16":
            if r is not None and t.dtype.kind in "fc":  # an int/bool result (element_size, allclose) is torch's own
                r = _to_numpy(r)
                if r.shape == t.shape:
                    t = r
            rtol, atol = max(rtol, case.half_rtol), max(atol, case.half_atol)
        problem = values_differ(t, m, rtol, atol)
        if problem:
            return Outcome("value", f"output {i}: {problem}")
    return None


def values_differ(t: np.ndarray, m: np.ndarray, rtol: float, atol: float) -> str:
    """'' when equal within tolerance (NaN and Inf positions must agree), else what differs."""
    if np.iscomplexobj(t) or np.iscomplexobj(m):
        t, m = np.stack([np.real(t), np.imag(t)]), np.stack([np.real(m), np.imag(m)])
    tf, mf = t.astype(np.float64), m.astype(np.float64)
    if not np.array_equal(np.isnan(tf), np.isnan(mf)):
        return "NaN positions differ"
    if not np.array_equal(np.isposinf(tf), np.isposinf(mf)) or not np.array_equal(np.isneginf(tf), np.isneginf(mf)):
        return "Inf positions differ"
    finite = np.isfinite(tf)
    if finite.any() and not np.allclose(mf[finite], tf[finite], rtol=rtol, atol=atol):
        diff = np.abs(tf[finite] - mf[finite])
        return f"max abs diff {diff.max():.3g} exceeds rtol={rtol:g} atol={atol:g}"
    return ""


def _random(first, second) -> bool:
    """Do two torch runs under different seeds differ (a random operation, or an argument that makes it one)?"""
    a, b = _flatten(first), _flatten(second)
    for x, y in zip(a, b):
        x, y = _to_numpy(x), _to_numpy(y)
        if x.shape == y.shape and x.dtype == y.dtype and x.size and x.dtype != object \
                and not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return True
    return False


_FLAG = re.compile(r"# mindport: (MP\d+)")


def run_case(case: Case, seed: int = 0, memo: dict | None = None) -> Outcome:
    """Convert, run both frameworks, compare. Never raises for a framework's error: that is an outcome.

    ``memo``: outcomes by (MindSpore code, inputs): two call styles that convert to the same code run once."""
    return _run_case(case, seed, memo)


def _run_case(case: Case, seed: int, memo: dict | None) -> Outcome:
    import torch

    from mindport.discovery import legacy_torch

    legacy_torch.install()  # torch._six, torch.rfft/irfft: the torch side has what torch 1.x had (as function.prepare)
    arrays, noncontiguous = make_inputs(case, seed)
    t_mod = _load(case.torch_code, "torch_snippet")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(1)
            t_out, t_args, t_layer = _run_torch(case, t_mod, arrays, noncontiguous)
            if case.compare != "shape":
                torch.manual_seed(2)
                again = _run_torch(case, t_mod, arrays, noncontiguous)
                if _random(t_out, again[0]) or _random(t_args, again[1]):
                    case = replace(case, compare="shape")  # a random draw: compare shapes and dtypes
    except Exception as exc:  # noqa: BLE001 - torch rejects the call: not a case
        return Outcome("rejected", f"{type(exc).__name__}: {str(exc)[:200]}")
    try:
        ms_code, diagnostics = convert(case.torch_code)
    except Exception as exc:  # noqa: BLE001
        return Outcome("convert_error", f"{type(exc).__name__}: {exc}")
    if diagnostics:
        return Outcome("flagged", "; ".join(diagnostics), ms_code)
    key = (ms_code, case.variant, case.specs, case.call, case.train, seed)
    if memo is not None and key in memo:
        return memo[key]
    outcome = _run_converted(case, ms_code, t_mod, t_out, t_args, t_layer, arrays, noncontiguous)
    if memo is not None:
        memo[key] = outcome
    return outcome


def _run_converted(case, ms_code, t_mod, t_out, t_args, t_layer, arrays, noncontiguous) -> Outcome:
    import torch

    half_ref = None
    if case.variant == "float16" and case.compare != "shape":
        try:
            half_ref = _half_reference(case, t_mod, arrays, noncontiguous)
        except Exception:  # noqa: BLE001 - no float32 reference: compare with torch's float16 result
            half_ref = None
    try:
        m_mod = _load(ms_code, "ms_snippet")
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m_out, m_args = _run_ms(case, m_mod, arrays, noncontiguous, t_layer)
            m_out = [_to_numpy(leaf) for leaf in _flatten(m_out)]  # MindSpore raises some errors on first read
    except Exception as exc:  # noqa: BLE001
        # the first line of the message proper (MindSpore's kernel errors open with "----" banners and "- headings")
        text = next((line for line in str(exc).split("\n") if line.strip() and not line.startswith("-")), "")[:300]
        return Outcome("ms_error", f"{type(exc).__name__}: {text}", ms_code)
    try:
        problem = _compare(case, t_out, m_out, half_ref)
    except Exception as exc:  # noqa: BLE001 - an output that is not array-like on one side
        problem = Outcome("value", f"outputs not comparable: {type(exc).__name__}: {exc}")
    if problem is not None:
        problem.ms_code = ms_code
        return problem
    for (name, _), t_arg, m_arg in zip(case.specs if not case.layer else [(n, None) for n in case.call],
                                        t_args, m_args):
        if isinstance(t_arg, torch.Tensor) and hasattr(m_arg, "asnumpy"):
            t_after, m_after = _to_numpy(t_arg), _to_numpy(m_arg)
            if t_after.shape != m_after.shape:
                return Outcome("inplace", f"input {name}: shape after the call {t_after.shape} (torch) != "
                               f"{m_after.shape} (MindSpore)", ms_code)
            if t_after.dtype != m_after.dtype:
                return Outcome("inplace", f"input {name}: dtype after the call {t_after.dtype} (torch) != "
                               f"{m_after.dtype} (MindSpore)", ms_code)
            tol = (case.half_rtol, case.half_atol) if t_after.dtype == np.float16 else (case.rtol, case.atol)
            if case.compare == "shape":  # a random draw: the input must change in both or in neither
                original = arrays[name]
                t_changed = not np.array_equal(t_after, original, equal_nan=original.dtype.kind in "fc")
                m_changed = not np.array_equal(m_after, original, equal_nan=original.dtype.kind in "fc")
                if t_changed != m_changed:
                    what = "changed by torch, not by MindSpore" if t_changed else "changed by MindSpore, not by torch"
                    return Outcome("inplace", f"input {name} after the call: {what}", ms_code)
                continue
            if t_after.size and values_differ(t_after, m_after.astype(t_after.dtype), *tol):
                changed = not np.array_equal(t_after, arrays[name], equal_nan=t_after.dtype.kind in "fc")
                what = "changed by torch, not by MindSpore" if changed else "changed by MindSpore, not by torch"
                return Outcome("inplace", f"input {name} after the call: {what}", ms_code)
    return Outcome("pass", "", ms_code)


@dataclass
class EntryReport:
    entry: str
    outcomes: list = field(default_factory=list)  # (label, variant, kind, detail)


def sweep_entry(entry: Entry, registry: Registry, limit: int | None = None, seed: int = 0,
                known: dict | None = None, progress=None, variants=None, labels=None) -> EntryReport:
    """All (or ``limit`` seeded) cases of one entry. ``known``: case index -> outcome tuple already had (from a worker
    process that died on a later case; the case that killed it is known as a ``crash``): not run again.
    ``progress(i, outcome)`` is called before case ``i`` runs (outcome None) and after. ``variants``/``labels``:
    only the cases of these input variants / whose label starts with one of these (e.g. ``("complex64",)``)."""
    report = EntryReport(entry.torch)
    all_cases = [c for c in cases(entry, registry) if (not variants or c.variant in variants)
                 and (not labels or c.label.startswith(tuple(labels)))]
    if limit is not None and len(all_cases) > limit:
        rng = np.random.default_rng(seed)
        picked = sorted(rng.choice(len(all_cases), size=limit, replace=False))
        all_cases = [all_cases[i] for i in picked]
    memo: dict = {}
    for i, case in enumerate(all_cases):
        if known and i in known:
            label, variant, kind, detail = known[i]
            report.outcomes.append((case.label, case.variant, kind, detail) if label == "*" else
                                   (label, variant, kind, detail))
            continue
        if progress is not None:
            progress(i, None)
        outcome = run_case(case, seed, memo)
        kind = outcome.kind
        if case.known and outcome.mismatch:
            kind = f"known:{kind}"  # documented in the entry (sweep.known): counted apart, not hidden
        report.outcomes.append((case.label, case.variant, kind, outcome.detail))
        if progress is not None:
            progress(i, report.outcomes[-1])
    return report
