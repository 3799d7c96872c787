"""Layer-by-layer localisation: which layer of the MindSpore port diverges first, and why.

Forward hooks on every torch module and every MindSpore cell record each call's inputs, output and call site
(``file:line`` of the user's statement) in completion order (a layer's hook fires when its ``forward``/``construct``
returns, so children come before their parent). The hooks run inside each side's process; the records reach the
parent as plain data. The converter keeps attribute names, so the module path ``features.1`` names the same layer on
both sides; calls are matched by (path, call number), so a layer used twice is compared twice.

A diverging layer is the cause when its inputs agree and its output does not (msprobe's rule), or a known trap
explains it; the first cause in completion order is the report's first divergent layer. Its two configurations are
compared by the known-trap rules (``traps.py``: ``TRAPS``); the rule that explains the difference becomes the
report's cause. The records come from ``hooks.py`` (inside each side) and the configurations from ``configs.py``.
"""
from __future__ import annotations

import dataclasses
import functools

from mindport.validators.parity.hooks import types_correspond
from mindport.validators.parity.traps import config_differences, find_traps

# ----------------------------------------------------------------------------------------------------------------
# Who introduced the error (runs in the parent, on the records both sides sent)

AMPLIFICATION = 10.0  # a layer is the cause when its output error (relative to scale) is 10x its inputs' error


def _inside(path: str, ancestor: str) -> bool:
    return ancestor == "" and path != "" or path.startswith(ancestor + ".")


def localize_layers(ref_records: list[dict], ms_records: list[dict], rtol: float, atol: float) -> list:
    """One LayerResult per torch layer call, in completion order, with msprobe's grade and the layer's role.

    A diverging layer is the *cause* when a known trap explains it, or when its inputs agree (exactly, or with an
    error at most a tenth of its output's, relative to each tensor's scale) while its output diverges; it only
    *propagates* the error when its inputs already carry it; it *contains* the cause when the cause is one of its
    sub-layers. Gradual float drift thus blames no layer (see :func:`drift_note`).
    """
    from mindport.validators.parity.metrics import (
        grade,
        is_constant,
        is_float,
        layer_metrics,
        leaves_metrics,
    )
    from mindport.validators.parity.results import LayerResult

    ms_by_key = {(r["path"], r["call"]): r for r in ms_records}
    results: list[LayerResult] = []
    for index, rec in enumerate(ref_records):
        ms_rec = ms_by_key.get((rec["path"], rec["call"]))
        tcfg = rec.get("config", {})
        floats = [a for a in rec["leaves"] if is_float(a)]
        lr = LayerResult(index, rec["path"], rec["call"], rec["type"], "", "missing_in_mindspore", torch_config=tcfg,
                         torch_site=rec.get("site", ""), torch_def=rec.get("def", ""),
                         constant=bool(floats) and all(is_constant(a) for a in floats))
        inputs = None
        if ms_rec is None:
            lr.note = "no MindSpore cell ran at this path (it raised earlier, or was renamed)"
            lr.grade = "error"
        elif rec.get("unrecorded") or ms_rec.get("unrecorded"):
            lr.status, lr.ms_type = "not_compared", ms_rec["type"]
            lr.note = "not compared: the layers before it filled the memory the localisation keeps (hooks.RECORD_BYTES)"
        else:
            mcfg = ms_rec.get("config", {})
            metrics = layer_metrics(rec["leaves"], ms_rec["leaves"], rtol, atol)
            nan_ok = metrics.pop("nan_ok", True)
            lr.status, lr.note = metrics.pop("status"), metrics.pop("note", "")
            for key, value in metrics.items():
                setattr(lr, key, value)
            lr.ms_type, lr.ms_config = ms_rec["type"], mcfg
            lr.ms_site, lr.ms_def = ms_rec.get("site", ""), ms_rec.get("def", "")
            inputs = leaves_metrics(rec.get("inputs", []), ms_rec.get("inputs", []))
            if inputs is not None and inputs["size"]:
                lr.input_max_rel, lr.input_cosine = inputs["max_rel"], inputs["cosine"]
                lr.input_ratio_1e3 = inputs["ratio_1e3"]
            else:
                inputs = None
            if lr.status == "shape_mismatch":
                lr.grade, lr.grade_reasons = "error", ["output shapes differ"]
            else:
                lr.grade, lr.grade_reasons = grade({**metrics, "nan_ok": nan_ok}, inputs)
            if not types_correspond(rec, ms_rec):
                lr.note = (lr.note + "; " if lr.note else "") + f"types differ: {rec['type']} vs {ms_rec['type']}"
            lr.causes = [dataclasses.asdict(f) for f in find_traps(rec["type"], tcfg, mcfg)]
        _assign_role(lr, results, inputs, rtol, atol)
        results.append(lr)
    return results


def _assign_role(lr, results: list, inputs: dict | None, rtol: float, atol: float) -> None:
    if not lr.diverged:
        return

    def add(note: str) -> None:
        lr.note = ((lr.note + "; ") if lr.note else "") + note

    inner_causes = [r for r in results if r.role == "cause" and _inside(r.path, lr.path)]
    if lr.causes:
        lr.role = "cause"
        return
    if inner_causes:
        lr.role = "contains"
        return
    if inputs is not None:
        in_rel, out_rel = inputs["max_rel"], lr.max_rel
        inputs_agree = inputs["max_abs"] <= atol + rtol * inputs["ref_scale"]
        if lr.status != "diverged" or out_rel is None:
            lr.role = "cause" if inputs_agree else "propagated"
        elif inputs["max_abs"] == 0 or out_rel >= AMPLIFICATION * in_rel:
            lr.role = "cause"
        else:
            lr.role = "propagated"
            add(f"its inputs already differ (error {in_rel:.2g} of their scale, output {out_rel:.2g}): "
                "propagated, not introduced here")
            return
    else:
        earlier = [r for r in results if r.diverged and not _inside(r.path, lr.path)]
        if earlier:
            lr.role = "propagated"
            add("follows an earlier divergence")
            return
        lr.role = "cause"
    children = [r for r in results if _inside(r.path, lr.path)]
    if lr.role != "cause" or lr.status != "diverged":
        return
    if children and any(c.diverged for c in children) and not _error_enters_between(lr, children):
        # its sub-layers carried the error on, each a little further, and none of them introduced it: drift
        lr.role = "propagated"
        add("its sub-layers carry an error that grows through them; none introduces it")
    elif children:
        add("its sub-layers matched or only passed an error on: the difference comes from this layer's own forward "
            "code (functional calls between its sub-layers)")
    else:
        diffs = config_differences(lr.torch_config, lr.ms_config)
        add("settings differ: " + "; ".join(diffs) if diffs else "no known trap matches these settings")


def _error_enters_between(parent, descendants: list) -> bool:
    """True when a sub-layer's inputs carry a much larger error (x AMPLIFICATION) than the parent's inputs and every
    output before it: the parent's own code between its sub-layers put it there."""
    for i, child in enumerate(descendants):
        if child.input_max_rel is None:
            continue
        before = [d.max_rel for d in descendants[:i] if d.max_rel is not None and not _inside(d.path, child.path)]
        previous = max([parent.input_max_rel or 0.0, *before])
        if child.input_max_rel > AMPLIFICATION * previous and child.input_max_rel > 0:
            return True
    return False


def drift_note(layers: list) -> str:
    """When the outputs diverge and no layer is the cause: the error grew gradually; name the largest growth."""
    best, growth = None, 0.0
    for lr in layers:
        if lr.max_rel is None or lr.input_max_rel is None or lr.input_max_rel == 0:
            continue
        g = lr.max_rel / lr.input_max_rel
        if g > growth:
            best, growth = lr, g
    text = ("accumulated drift: no layer introduces the error (each one's output error stays within "
            f"{AMPLIFICATION:g}x its inputs'), it grows from layer to layer")
    if best is not None:
        text += f"; the largest growth is x{growth:.3g} at {best.path or '<root>'} ({best.torch_type})"
    return text


# ----------------------------------------------------------------------------------------------------------------
# Where it failed: the statement and its `# mindport:` diagnostics

@functools.lru_cache(maxsize=64)
def _statements(path: str) -> tuple[list[str], list[tuple[int, int]]]:
    import ast

    try:
        text = open(path, encoding="utf-8").read()  # noqa: SIM115 - read once, cached
    except OSError:
        return [], []
    lines = text.splitlines()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return lines, []
    spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    return lines, spans


def statement_at(site: str) -> tuple[str, list[str]]:
    """The source of the statement at ``file:line`` (first line, stripped) and the ``# mindport:`` comments on it."""
    path, _, line = site.rpartition(":")
    if not path or not line.isdigit():
        return "", []
    lines, spans = _statements(path)
    n = int(line)
    if not 0 < n <= len(lines):
        return "", []
    # the innermost simple statement containing the line (compound statements span their whole body)
    start, end = min((s for s in spans if s[0] <= n <= s[1]), key=lambda s: s[1] - s[0], default=(n, n))
    found = []
    for text in lines[start - 1:end]:
        marker = text.find("# mindport:")
        if marker != -1:
            found.append(text[marker + 2:].strip())
    return lines[n - 1].strip(), found
