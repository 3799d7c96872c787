"""The verdict: ``ParityReport.ok`` and the diagnostics (MP401, MP403, MP405, MP406) from every check of a run."""
from __future__ import annotations

from mindport.errors import Diagnostic
from mindport.validators.parity.results import (
    ParityReport,
)
from mindport.validators.parity.settings import Settings


def _forward_ok(report: ParityReport) -> bool:
    """Every output matches and no known trap was found in the two sides' layer settings: a static hyperparameter
    difference (GELU approximation, eps, padding, BatchNorm momentum) fails the check even when these inputs and
    weights do not show it (GPT-style 0.02 weights keep GELU's input where both approximations agree)."""
    return (not report.ms_error and bool(report.outputs) and report.structure["ok"]
            and all(o.allclose for o in report.outputs) and not report.config_findings)


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
