"""The verdict of a run, decided here and nowhere else: ``ParityReport.outcome`` (``pass``, ``diverged`` or
``inconclusive``), the printed reason (``ParityReport.reason``), ``ParityReport.ok`` (a pass) and the diagnostics
(MP401, MP403, MP405, MP406) from every check of a run.

* **diverged** (exit code 1): an output, the structure, GRAPH_MODE, the gradients or the training differ, the port
  raised, a training-only setting differs, or the re-check on perturbed weights differs;
* **inconclusive** (exit code 3): nothing differs, but a constant reference output could not be re-checked on
  perturbed weights (the model has no parameter to perturb, or its weights were given as they are): comparing
  constants proves little;
* **pass** (exit code 0): everything compared agrees, constant outputs included once their re-check on perturbed
  weights agrees too (an auxiliary loss that is 0 in eval mode stays 0 there: it is constant by construction)."""
from __future__ import annotations

from mindport.errors import Diagnostic
from mindport.validators.parity.results import (
    ParityReport,
)
from mindport.validators.parity.settings import Settings


def _forward_divergences(report: ParityReport) -> list[str]:
    """Why the forward comparison does not hold (empty: it holds)."""
    why = []
    if report.ms_error:
        why.append("the MindSpore model raised" + (f" at {report.ms_error_site}" if report.ms_error_site else "")
                   + f": {report.ms_error.splitlines()[0]}")
    elif not report.outputs:
        why.append("no output was compared")
    if not report.structure["ok"]:
        why.append("the output structures differ")
    bad = [o.key for o in report.outputs if not o.allclose]
    if bad:
        why.append(f"{', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''} differ{'s' if len(bad) == 1 else ''}")
    if report.config_findings:
        # a static hyperparameter difference (GELU approximation, eps, padding, BatchNorm momentum) fails the check
        # even when these inputs and weights do not show it (GPT-style 0.02 weights keep GELU's input where both
        # approximations agree)
        first = report.config_findings[0]
        why.append(f"a layer setting differs ({first['path'] or '<root>'}: {first['cause']})"
                   + (f" and {len(report.config_findings) - 1} more" if len(report.config_findings) > 1 else ""))
    return why


def _forward_ok(report: ParityReport) -> bool:
    return not _forward_divergences(report)


def _decide(report: ParityReport, diverged: list[str], inconclusive: str) -> None:
    if diverged:
        report.outcome, report.reason = "diverged", "; ".join(diverged)
    elif inconclusive:
        report.outcome, report.reason = "inconclusive", inconclusive
    else:
        report.outcome = "pass"
        constant = report.vacuous.get("constant_outputs", []) if report.vacuous else []
        again = "a second input draw" if report.vacuous.get("perturbed_inputs") else "perturbed weights"
        report.reason = "every output and layer compared agrees" + (
            f"; constant {', '.join(constant)} re-checked on {again}" if constant else "")
    report.ok = report.outcome == "pass"


def _finish(report: ParityReport, s: Settings) -> None:
    if report.graph.status == "failed":
        loc = report.graph.location
        report.diagnostics.append(Diagnostic(
            "MP403", "GRAPH_MODE failed: " + (report.graph.error.splitlines() or [""])[0],
            file=loc.rpartition(":")[0] or "<graph>", line=int(loc.rpartition(":")[2] or 0) if loc else 0,
            suggestion="see docs: static-graph restrictions (no try/except, numpy, ...); --no-graph skips this check"))
    elif report.graph.status == "mismatch":
        report.diagnostics.append(Diagnostic("MP403", "GRAPH_MODE outputs differ from PyNative", file="<graph>"))
    if report.graph.note:
        report.diagnostics.append(Diagnostic("MP403", "GRAPH_MODE " + report.graph.note, file="<graph>",
                                             severity="warning"))
    for o in report.outputs:
        if not o.allclose and not o.status.startswith("missing"):
            report.diagnostics.append(Diagnostic(
                "MP401", f"{o.key}: {o.message or o.status} (max abs {o.max_abs or 0:.3g}, max rel {o.max_rel or 0:.3g})",
                file="<parity>"))
    diverged = _forward_divergences(report)
    if report.graph.status in ("mismatch", "failed"):
        diverged.append("GRAPH_MODE " + ("failed" if report.graph.status == "failed" else "differs from PyNative"))
    inconclusive = ""
    if report.vacuous:
        if report.perturbed is not None and not report.perturbed.ok:
            diverged.append("the re-check on perturbed weights differs")
        elif report.perturbed is None and report.vacuous["constant_outputs"]:
            inconclusive = (f"{', '.join(report.vacuous['constant_outputs'])} constant and not re-checked on "
                            "perturbed weights: comparing constants proves little")
    if report.grad is not None:
        if not report.grad.ok:
            diverged.append("the gradients differ")
        g = report.grad.first_divergent
        if g is not None:
            report.diagnostics.append(Diagnostic(
                "MP405", f"gradient of {g.name} differs (cosine {g.cosine:.4g}, sign similarity "
                         f"{g.sign_similarity:.3f}): first divergent parameter in backward order, layer {g.layer or '<root>'}",
                **_site_fields(report.grad.layer.get("ms_site", "")), api=g.name))
        elif not report.grad.ok:
            report.diagnostics.append(Diagnostic("MP405", report.grad.note or "gradients not compared", file="<parity>"))
    if report.train is not None:
        if not report.train.ok:
            diverged.append("the training differs")
            t = report.train
            where = (f"step {t.first_divergent_step}: loss {t.losses['torch'][t.first_divergent_step]:.6g} vs "
                     f"{t.losses['mindspore'][t.first_divergent_step]:.6g}") if t.first_divergent_step is not None \
                else (t.note or "final weights differ")
            report.diagnostics.append(Diagnostic("MP406", f"training diverges at {where}", file="<parity>"))
    _decide(report, diverged, inconclusive)
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
