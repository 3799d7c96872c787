"""Rendering a :class:`~mindport.validators.parity.results.ParityReport`: rich terminal tables, JSON, one-file HTML.

The HTML page is self-contained: inline CSS, plots as inline SVG (matplotlib), no scripts and no network fetches.
:func:`html_page` and :data:`STYLE` are the one page style of every mindport report (``mindport migrate`` builds its
report page with them and embeds the parity sections). The JSON schema is documented in docs/parity-report.md.
"""
from __future__ import annotations

import io
import json
import math
from pathlib import Path

import jinja2


def _clean(obj):
    """JSON has no NaN/Inf: non-finite floats become strings ("nan", "inf", "-inf")."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def to_json_text(report) -> str:
    return json.dumps(_clean(report.to_json()), indent=2, allow_nan=False)


def write_json(report, path: Path) -> None:
    Path(path).write_text(to_json_text(report) + "\n", encoding="utf-8")


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.3g}" if x != 0 else "0"
    return str(x)


def _cfg_text(cfg: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in cfg.items())


def _statement(site: str) -> str:
    from mindport.validators.parity.localize import statement_at

    return statement_at(site)[0] if site else ""


# ----------------------------------------------------------------------------------------------------------------
# Terminal

def wrapping_table(*args, **kwargs):
    """A rich Table whose cells wrap on a narrow terminal instead of being cut ("outp…"): every mindport table."""
    from rich.table import Table

    class _Wrapping(Table):
        def add_column(self, *a, **kw):
            kw.setdefault("overflow", "fold")
            return super().add_column(*a, **kw)

    return _Wrapping(*args, **kwargs)


def print_report(report, console=None, max_layers: int = 25, exit_code: bool = False) -> None:
    """The report on the terminal, ending with the verdict and its reason (``exit_code``: and validate's exit code)."""
    from rich.console import Console
    from rich.markup import escape
    console = console or Console(emoji=False)
    ref, cand = report.reference, report.candidate
    console.print(f"{_verdict_markup(report)}  {ref.get('ref', ref.get('type', ''))}  vs  "
                  f"{cand.get('ref', cand.get('type', ''))}")
    w = report.weights
    if w:
        text = f"weights: {w.get('source')}: {w.get('transferred', '?')} transferred"
        if w.get("missing") or w.get("unexpected"):
            text += f", missing {len(w.get('missing', []))}, unmatched {len(w.get('unexpected', []))}"
        if w.get("error"):
            text += f" ({w['error']})"
        console.print(text, style="dim" if w.get("ok") else "yellow", markup=False)
    if report.ms_error:
        console.print(f"[red]MindSpore model raised:[/] {escape(report.ms_error.splitlines()[0])}")
    for p in report.structure.get("problems", []):
        console.print(f"[red]structure:[/] {escape(p)}")
    _print_outputs(report, console)
    _print_layers(report, console, max_layers)
    fd = report.first_divergent
    if fd is not None:
        _print_first_divergent(fd, console, escape)
    elif report.drift:
        console.print(f"[yellow]{escape(report.drift)}[/]")
    others = [f for f in report.config_findings if fd is None or f["path"] != fd.path]
    for f in others[:10]:
        tag = "training-only" if f["training_only"] else "setting"
        console.print(f"[yellow]{tag}:[/] {escape(f['path'] or '<root>')}: {escape(f['cause'])}")
    if report.vacuous:
        _print_vacuous(report, console, escape)
    g = report.graph
    gstyle = {"ok": "green", "mismatch": "red", "failed": "red"}.get(g.status, "dim")
    text = f"graph mode: [{gstyle}]{g.status}[/]"
    if g.status == "ok":
        text += f" (compiled, equal to PyNative, max abs {_fmt(g.max_abs)})"
    elif g.status == "mismatch":
        text += f" (outputs differ from PyNative, max abs {_fmt(g.max_abs)})"
    elif g.status == "failed":
        text += (f" at {escape(g.location or '?')}: {escape((g.error.splitlines() or [''])[0])} "
                 "(--no-graph skips this check)")
    console.print(text)
    if report.grad is not None:
        _print_grad(report.grad, console, escape)
    if report.train is not None:
        _print_train(report.train, console, escape)
    for diag in report.diagnostics:
        if diag.severity in ("error", "warning"):
            console.print(diag.format(), markup=False, style="dim" if diag.severity == "warning" else None)
    if report.logs and not report.ok:
        console.print(f"logs: {escape(report.logs.get('folder', ''))}", style="dim")
    elif not report.ok:
        console.print("logs: --log-dir DIR keeps both sides' logs", style="dim")
    code = f" (exit code {report.exit_code})" if exit_code else ""
    console.print(f"verdict: {_verdict_markup(report)}{code}: {escape(report.reason)}")


_VERDICT_STYLE = {"pass": "bold green", "diverged": "bold red", "inconclusive": "bold yellow"}


def _verdict_markup(report) -> str:
    return f"[{_VERDICT_STYLE.get(report.outcome, 'bold red')}]{report.outcome.upper()}[/]"


def _print_outputs(report, console) -> None:
    table = wrapping_table(title="outputs", title_justify="left")
    for col in ("output", "shape", "status", "grade", "max abs", "max rel", "cosine", "0.1%", "0.5%", "rtol/atol"):
        table.add_column(col, justify="left" if col in ("output", "status", "grade") else "right")
    for o in report.outputs:
        style = "green" if o.allclose else "red"
        table.add_row(o.key, "x".join(map(str, o.ref_shape or [])) or "-", f"[{style}]{o.status}[/]", o.grade or "-",
                      _fmt(o.max_abs), _fmt(o.max_rel), _fmt(o.cosine), _fmt(o.ratio_1e3), _fmt(o.ratio_5e3),
                      f"{o.rtol:g}/{o.atol:g}")
        if o.message:
            table.add_row("", "", f"[yellow]{o.message}[/]", "", "", "", "", "", "", "")
    if report.outputs:
        console.print(table)


def _print_layers(report, console, max_layers: int) -> None:
    fd = report.first_divergent
    if not report.layers:
        if report.localization:
            console.print(f"localisation: {report.localization}", style="dim")
        return
    shown = report.layers
    if len(shown) > max_layers:
        start = max(0, (fd.index if fd else 0) - max_layers // 2)
        shown = shown[start:start + max_layers]
    lt = wrapping_table(title=f"layers ({len(report.layers)} calls, execution order)", title_justify="left")
    for col in ("#", "path", "torch", "MindSpore", "status", "grade", "role", "max abs", "max rel", "cosine", "0.1%"):
        lt.add_column(col, justify="right" if col in ("#", "max abs", "max rel", "cosine", "0.1%") else "left")
    for lr in shown:
        style = "red" if lr.diverged else ("yellow" if lr.causes else "green")
        mark = " <- first" if fd is not None and lr is fd else ""
        lt.add_row(str(lr.index), (lr.path or "<root>") + (f" (call {lr.call})" if lr.call else ""),
                   lr.torch_type, lr.ms_type or "-", f"[{style}]{lr.status}{mark}[/]", lr.grade or "-",
                   lr.role or "-", _fmt(lr.max_abs), _fmt(lr.max_rel), _fmt(lr.cosine), _fmt(lr.ratio_1e3))
    console.print(lt)


def _print_first_divergent(fd, console, escape) -> None:
    console.print(f"[bold]first divergent layer:[/] {escape(fd.path or '<root>')} ({fd.torch_type} -> "
                  f"{fd.ms_type or '?'})")
    for label, site in (("converted", fd.ms_site or fd.ms_def), ("torch", fd.torch_site or fd.torch_def)):
        if site:
            console.print(f"  {label + ':':10} {escape(site)}  {escape(_statement(site))}")
    for diag in fd.ms_diagnostics:
        console.print(f"  [yellow]on that line:[/] # {escape(diag)}")
    console.print(f"  torch:     {escape(_cfg_text(fd.torch_config))}")
    console.print(f"  MindSpore: {escape(_cfg_text(fd.ms_config))}")
    console.print(f"  [bold]likely cause:[/] {escape(fd.cause or 'unknown')}")


def _print_vacuous(report, console, escape) -> None:
    v = report.vacuous
    console.print(f"[yellow]constant reference:[/] {escape(v.get('note', ''))}")
    sub = report.perturbed
    if sub is None:
        return
    verdict = "[green]match[/]" if sub.ok else "[red]differ[/]"
    worst = max((o.max_abs for o in sub.outputs if o.max_abs is not None), default=None)
    console.print(f"  on perturbed weights: {verdict} (max abs {_fmt(worst)})")
    if sub.first_divergent is not None:
        f = sub.first_divergent
        console.print(f"  first divergent layer on perturbed weights: {escape(f.path or '<root>')} ({f.torch_type} -> "
                      f"{f.ms_type or '?'}): {escape(f.cause or 'unknown')}")
        if f.ms_site:
            console.print(f"    converted: {escape(f.ms_site)}  {escape(_statement(f.ms_site))}")


def _print_grad(g, console, escape) -> None:
    verdict = "[green]match[/]" if g.ok else "[red]diverge[/]"
    loss = g.loss or {}
    console.print(f"gradients: {verdict} ({len(g.params)} parameters, sign similarity {_fmt(g.sign_similarity)}, "
                  f"projection loss {_fmt(loss.get('torch'))} vs {_fmt(loss.get('mindspore'))}"
                  f"{', on perturbed weights' if g.weights == 'perturbed' else ''})")
    if g.note:
        console.print(f"  {escape(g.note)}", style="yellow")
    if g.first_divergent is not None:
        p = g.first_divergent
        layer = g.layer or {}
        console.print(f"  [bold]first divergent gradient (backward order):[/] {escape(p.name)} -> {escape(p.ms_name)} "
                      f"in layer {escape(p.layer or '<root>')} ({layer.get('torch_type', '?')} -> "
                      f"{layer.get('ms_type', '?')}): cosine {_fmt(p.cosine)}, max rel {_fmt(p.max_rel)}, "
                      f"sign similarity {_fmt(p.sign_similarity)}")
        for label, key in (("converted", "ms_site"), ("torch", "torch_site")):
            if layer.get(key):
                console.print(f"    {label + ':':10} {escape(layer[key])}  {escape(_statement(layer[key]))}")
        for diag in layer.get("ms_diagnostics", []):
            console.print(f"    [yellow]on that line:[/] # {escape(diag)}")
    if not g.ok and g.params:
        table = wrapping_table(title="gradients (backward order)", title_justify="left")
        for col in ("parameter", "MindSpore", "status", "grade", "max abs", "max rel", "cosine", "sign sim."):
            table.add_column(col, justify="right" if col in ("max abs", "max rel", "cosine", "sign sim.") else "left")
        for p in g.params[:15]:
            style = "red" if p.diverged else "green"
            table.add_row(p.name, p.ms_name or "-", f"[{style}]{p.status}[/]", p.grade or "-", _fmt(p.max_abs),
                          _fmt(p.max_rel), _fmt(p.cosine), _fmt(p.sign_similarity))
        console.print(table)


def _print_train(t, console, escape) -> None:
    verdict = "[green]match[/]" if t.ok else "[red]diverge[/]"
    opt = t.optimizer or {}
    console.print(f"training: {verdict} ({t.steps} steps, {opt.get('torch', '?')} -> {opt.get('mindspore', '?')}, "
                  f"lr {opt.get('lr', '?')}, loss {(t.loss or {}).get('torch', '?')}; max loss difference "
                  f"{_fmt(t.max_rel_diff)} relative, tolerance {t.rtol:g})")
    losses = t.losses or {}
    if losses.get("torch"):
        console.print(f"  loss torch:     {' '.join(f'{v:.6g}' for v in losses['torch'][:8])}"
                      f"{' ...' if len(losses['torch']) > 8 else ''}", style="dim")
        console.print(f"  loss MindSpore: {' '.join(f'{v:.6g}' for v in losses['mindspore'][:8])}"
                      f"{' ...' if len(losses['mindspore']) > 8 else ''}", style="dim")
    if t.first_divergent_step is not None:
        console.print(f"  [red]losses part at step {t.first_divergent_step}[/]")
    if t.note:
        console.print(f"  {escape(t.note)}", style="yellow")


# ----------------------------------------------------------------------------------------------------------------
# Plots

def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]


def error_plot_svg(report) -> str:
    """Max abs error (and max error relative to the layer's scale) by layer, as an inline SVG string."""
    from matplotlib.figure import (
        Figure,  # no pyplot: no GUI backend, no global state, faster import
    )

    layers = [lr for lr in report.layers if lr.max_abs is not None]
    fig = Figure(figsize=(9, 3.6), dpi=100)
    ax = fig.subplots()
    if layers:
        floor = 1e-12
        xs = [lr.index for lr in layers]
        ax.semilogy(xs, [max(lr.max_abs, floor) for lr in layers], marker="o", ms=3, lw=1, label="max abs error")
        ax.semilogy(xs, [max(lr.max_rel or 0.0, floor) for lr in layers], marker=".", ms=3, lw=1, ls="--",
                    label="max abs / layer scale")
        fd = report.first_divergent
        if fd is not None and fd.max_abs is not None:
            ax.axvline(fd.index, color="red", lw=1)
            ax.annotate(f"first divergent: {fd.path or '<root>'}", (fd.index, max(fd.max_abs, floor)),
                        textcoords="offset points", xytext=(6, 8), color="red", fontsize=8)
        tol = report.settings.get("rtol", 1e-5)
        ax.axhline(tol, color="grey", lw=0.8, ls=":", label=f"rtol {tol:g}")
        ax.set_xlabel("layer call (execution order)")
        ax.set_ylabel("error")
        ax.legend(fontsize=8, loc="upper left")
        ax.grid(True, which="major", alpha=0.3)
    else:
        ax.text(0.5, 0.5, "no per-layer data", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    ax.set_title("error by layer")
    fig.tight_layout()
    return _svg(fig)


def loss_plot_svg(train) -> str:
    """Both loss curves by step, and their relative difference on a log axis."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6), dpi=100)
    ax = fig.subplots()
    lt, lm = train.losses.get("torch", []), train.losses.get("mindspore", [])
    ax.plot(range(len(lt)), lt, marker="o", ms=3, lw=1.5, label=f"torch ({train.loss.get('torch', '')})")
    ax.plot(range(len(lm)), lm, marker="x", ms=4, lw=1, ls="--", label=f"MindSpore ({train.loss.get('mindspore', '')})")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.grid(True, alpha=0.3)
    if train.rel_diff:
        ax2 = ax.twinx()
        ax2.semilogy(range(len(train.rel_diff)), [max(d, 1e-12) for d in train.rel_diff], color="grey", lw=0.8,
                     ls=":", label="relative difference")
        ax2.axhline(train.rtol, color="red", lw=0.8, ls=":", label=f"tolerance {train.rtol:g}")
        ax2.set_ylabel("relative difference")
        handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
        ax.legend(handles=handles, fontsize=8, loc="upper right")
    else:
        ax.legend(fontsize=8)
    ax.set_title("training loss, torch and MindSpore")
    fig.tight_layout()
    return _svg(fig)


# ----------------------------------------------------------------------------------------------------------------
# HTML: one page style for every mindport report

STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1em; margin-top: 1.2em; }
.badge { padding: 2px 10px; border-radius: 4px; color: white; font-size: 0.8em; }
.ok { background: #2e7d32; } .bad { background: #c62828; } .warn { background: #ef6c00; } .muted { background: #777; }
table { border-collapse: collapse; font-size: 0.85em; margin: 6px 0; }
td, th { border: 1px solid #ccc; padding: 3px 8px; vertical-align: top; }
th { background: #f3f3f3; text-align: left; } td.num { text-align: right; font-family: monospace; }
tr.div td { background: #fdecea; } tr.first td { background: #f8bbb5; font-weight: bold; }
tr.warnrow td { background: #fff4e0; }
pre { background: #f6f6f6; padding: 8px; white-space: pre-wrap; font-size: 0.85em; }
code { font-size: 0.9em; } .cfg td { font-family: monospace; } .dim { color: #888; font-size: 0.8em; }
"""


def html_page(title: str, body: str) -> str:
    from mindport import __version__

    env = jinja2.Environment(autoescape=True)
    return env.from_string(_PAGE).render(title=title, body=body, style=STYLE, version=__version__)


_PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{ title }}</title>
<style>{{ style|safe }}</style></head><body>
{{ body|safe }}
<p class="dim">mindport {{ version }}</p>
</body></html>
"""

_PARITY = r"""
<h1>mindport parity report <span class="badge {{ 'ok' if r.ok else ('warn' if verdict == 'inconclusive' else 'bad') }}">{{ verdict | upper }}</span></h1>
<p>{{ r.reason }}</p>
<h2>Summary</h2>
<table>
<tr><th>reference</th><td>{{ r.reference.get('ref', r.reference.get('type')) }} ({{ r.reference.kind }}){% if r.reference.get('ctor') %} ctor: <code>{{ r.reference.ctor }}</code>{% endif %}</td></tr>
<tr><th>MindSpore</th><td>{{ r.candidate.get('ref', r.candidate.get('type')) }}</td></tr>
<tr><th>inputs</th><td>{% for i in r.settings.get('inputs', []) %}<code>{{ i.get('spec', i.shape|join('x') ~ ':' ~ i.dtype) }}</code> {% endfor %}</td></tr>
<tr><th>tolerances</th><td>rtol {{ r.settings.get('rtol') }}, atol {{ r.settings.get('atol') }} (raised for float16/bfloat16 outputs){% if r.grad %}; gradients rtol {{ r.settings.get('grad_rtol') }}{% endif %}{% if r.train %}; training rtol {{ r.train.rtol }}{% endif %}</td></tr>
<tr><th>first divergent layer</th><td>{% if fd %}<b>{{ fd.path or '<root>' }}</b> ({{ fd.torch_type }} &rarr; {{ fd.ms_type }}){% if fd.ms_site %} at <code>{{ fd.ms_site }}</code>{% endif %}: {{ fd.cause or 'unknown cause' }}{% elif r.drift %}{{ r.drift }}{% else %}none{% endif %}</td></tr>
{% if r.vacuous %}<tr><th>constant reference</th><td><span class="badge warn">warning</span> {{ r.vacuous.get('note') }}</td></tr>{% endif %}
<tr><th>graph mode</th><td>{{ r.graph.status }}{% if r.graph.status == 'ok' %} (compiled; equal to PyNative){% elif r.graph.status == 'failed' %} at {{ r.graph.location or '?' }}{% endif %}</td></tr>
{% if r.grad %}<tr><th>gradients</th><td><span class="badge {{ 'ok' if r.grad.ok else 'bad' }}">{{ 'match' if r.grad.ok else 'diverge' }}</span>{% if r.grad.first_divergent %} first divergent: <b>{{ r.grad.first_divergent.name }}</b> (layer {{ r.grad.first_divergent.layer or '<root>' }}){% endif %}</td></tr>{% endif %}
{% if r.train %}<tr><th>training</th><td><span class="badge {{ 'ok' if r.train.ok else 'bad' }}">{{ 'match' if r.train.ok else 'diverge' }}</span> {{ r.train.steps }} steps, max loss difference {{ f(r.train.max_rel_diff) }} relative</td></tr>{% endif %}
{% if r.logs %}<tr><th>logs</th><td>{% for k, v in r.logs.items() %}{{ k }}: <code>{{ v }}</code> {% endfor %}</td></tr>{% endif %}
</table>
<h2>Weights</h2>
<table><tr><th>source</th><th>ok</th><th>transferred</th><th>missing in the torch checkpoint</th><th>torch keys unmatched</th><th>dropped by design</th>{% if r.weights.get('output') %}<th>written to</th>{% endif %}</tr>
<tr><td>{{ r.weights.get('source') }}</td><td>{{ f(r.weights.get('ok')) }}</td><td class="num">{{ r.weights.get('transferred', '-') }}</td><td>{{ r.weights.get('missing', [])|join(', ') or '-' }}</td><td>{{ r.weights.get('unexpected', [])|join(', ') or '-' }}</td><td>{{ r.weights.get('dropped', [])|join(', ') or '-' }}</td>{% if r.weights.get('output') %}<td><code>{{ r.weights.output }}</code></td>{% endif %}</tr></table>
{% if r.weights.get('error') %}<p>{{ r.weights.error }}</p>{% endif %}
{% if r.ms_error %}<h2>MindSpore model raised</h2><pre>{{ r.ms_error }}</pre>{% endif %}
{% if r.structure.problems %}<h2>Structure</h2><ul>{% for p in r.structure.problems %}<li>{{ p }}</li>{% endfor %}</ul>{% endif %}
<h2>Outputs</h2>
{{ outputs(r) }}
{% if fd %}<h2>First divergent layer: {{ fd.path or '<root>' }}</h2>
<table>
{% if fd.ms_site or fd.ms_def %}<tr><th>converted statement</th><td><code>{{ fd.ms_site or fd.ms_def }}</code> <code>{{ stmt(fd.ms_site or fd.ms_def) }}</code>{% for d in fd.ms_diagnostics %}<br><span class="badge warn">on that line</span> <code># {{ d }}</code>{% endfor %}</td></tr>{% endif %}
{% if fd.torch_site or fd.torch_def %}<tr><th>torch statement</th><td><code>{{ fd.torch_site or fd.torch_def }}</code> <code>{{ stmt(fd.torch_site or fd.torch_def) }}</code></td></tr>{% endif %}
<tr><th>inputs vs output</th><td>inputs: error {{ f(fd.input_max_rel) }} of their scale, cosine {{ f(fd.input_cosine) }}; output: {{ f(fd.max_rel) }}, cosine {{ f(fd.cosine) }}; msprobe grade <b>{{ fd.grade or '-' }}</b>{% for g in fd.grade_reasons %}; {{ g }}{% endfor %}</td></tr>
</table>
<table class="cfg"><tr><th></th><th>torch: {{ fd.torch_type }}</th><th>MindSpore: {{ fd.ms_type }}</th></tr>
{% for k in cfg_keys %}<tr><td>{{ k }}</td><td>{{ fd.torch_config.get(k, '') }}</td><td>{{ fd.ms_config.get(k, '') }}</td></tr>{% endfor %}
</table>
<p><b>Likely cause:</b> {{ fd.cause or 'no known trap matches; compare the settings above' }}</p>{% endif %}
{% if r.config_findings %}<h2>Known traps found in the settings</h2><ul>
{% for c in r.config_findings %}<li><code>{{ c.path or '<root>' }}</code>: {{ c.cause }}{% if c.training_only %} <span class="badge warn">training-only</span>{% endif %}</li>{% endfor %}</ul>{% endif %}
{% if r.vacuous %}<h2>Constant reference</h2>
<p>{{ r.vacuous.get('note') }}</p>
<table><tr><th>constant outputs</th><td>{{ r.vacuous.get('constant_outputs', [])|join(', ') or '-' }}</td></tr>
<tr><th>constant layers</th><td>{{ r.vacuous.get('constant_layers', [])|join(', ') or '-' }}</td></tr>
<tr><th>perturbed parameters</th><td>{{ r.vacuous.get('perturbed_parameters', [])|join(', ') or '-' }}</td></tr></table>
{% if r.perturbed %}<h3>On the perturbed weights: <span class="badge {{ 'ok' if r.perturbed.ok else 'bad' }}">{{ 'parity' if r.perturbed.ok else 'divergence' }}</span></h3>
{{ outputs(r.perturbed) }}
{% if r.perturbed.first_divergent %}<p>First divergent layer: <b>{{ r.perturbed.first_divergent.path or '<root>' }}</b> ({{ r.perturbed.first_divergent.torch_type }} &rarr; {{ r.perturbed.first_divergent.ms_type }}){% if r.perturbed.first_divergent.ms_site %} at <code>{{ r.perturbed.first_divergent.ms_site }}</code>{% endif %}: {{ r.perturbed.first_divergent.cause or 'unknown cause' }}</p>{% endif %}{% endif %}{% endif %}
<h2>Error by layer</h2>
{% if r.layers %}{{ svg|safe }}{% else %}<p>{{ r.localization or 'no per-layer data' }}</p>{% endif %}
{% if r.layers %}<h2>Layers (execution order)</h2>
<p class="dim">grade: msprobe's rules (pass / warning / error); role: <i>cause</i> = its inputs agree and its output does not, <i>propagated</i> = its inputs already differ, <i>contains</i> = the cause is one of its sub-layers.</p>
<table><tr><th>#</th><th>path</th><th>torch</th><th>MindSpore</th><th>status</th><th>grade</th><th>role</th><th>max abs</th><th>max rel</th><th>cosine</th><th>0.1 %</th><th>0.5 %</th><th>input err</th><th>note</th></tr>
{% for lr in r.layers %}<tr class="{{ 'first' if fd and lr.index == fd.index else ('div' if lr.diverged else ('warnrow' if lr.grade == 'warning' else '')) }}"><td class="num">{{ lr.index }}</td><td>{{ lr.path or '<root>' }}{% if lr.call %} (call {{ lr.call }}){% endif %}</td><td>{{ lr.torch_type }}</td><td>{{ lr.ms_type }}</td><td>{{ lr.status }}</td><td>{{ lr.grade }}</td><td>{{ lr.role }}</td>
<td class="num">{{ f(lr.max_abs) }}</td><td class="num">{{ f(lr.max_rel) }}</td><td class="num">{{ f(lr.cosine) }}</td><td class="num">{{ f(lr.ratio_1e3) }}</td><td class="num">{{ f(lr.ratio_5e3) }}</td><td class="num">{{ f(lr.input_max_rel) }}</td><td>{{ lr.cause }}</td></tr>
{% endfor %}</table>{% endif %}
<h2>Graph mode</h2>
<p>status: <b>{{ r.graph.status }}</b>; compiled: {{ r.graph.compiled }}; equal to PyNative: {{ r.graph.equal_to_pynative }}{% if r.graph.seconds %}; {{ '%.2f'|format(r.graph.seconds) }} s{% endif %}</p>
{% if r.graph.error %}<pre>{{ r.graph.error }}</pre>{% endif %}
{% if r.grad %}<h2>Gradients <span class="badge {{ 'ok' if r.grad.ok else 'bad' }}">{{ 'match' if r.grad.ok else 'diverge' }}</span></h2>
<p>Seeded loss: the sum of every floating output times a seeded random tensor of its shape; backward on both sides{% if r.grad.weights == 'perturbed' %}, on the perturbed weights{% endif %}. Loss {{ f(r.grad.loss.get('torch')) }} (torch) vs {{ f(r.grad.loss.get('mindspore')) }} (MindSpore); sign similarity over all parameters {{ f(r.grad.sign_similarity) }} (msprobe flags &lt; 0.97). {{ r.grad.note }}</p>
{% if r.grad.first_divergent %}<p>First divergent parameter in backward order: <b>{{ r.grad.first_divergent.name }}</b> &rarr; {{ r.grad.first_divergent.ms_name }}, layer <b>{{ r.grad.first_divergent.layer or '<root>' }}</b>{% if r.grad.layer.get('ms_site') %} at <code>{{ r.grad.layer.ms_site }}</code> <code>{{ stmt(r.grad.layer.ms_site) }}</code>{% endif %}{% for d in r.grad.layer.get('ms_diagnostics', []) %} <code># {{ d }}</code>{% endfor %}</p>{% endif %}
{{ params(r.grad.params, True) }}{% endif %}
{% if r.train %}<h2>Training <span class="badge {{ 'ok' if r.train.ok else 'bad' }}">{{ 'match' if r.train.ok else 'diverge' }}</span></h2>
<p>{{ r.train.steps }} steps from the same weights on the same seeded batches, dropout layers off: {{ r.train.optimizer.get('torch') }} &rarr; {{ r.train.optimizer.get('mindspore') }} (lr {{ r.train.optimizer.get('lr') }}{% for k, v in r.train.optimizer.get('args', {}).items() %}, {{ k }}={{ v }}{% endfor %}), loss {{ r.train.loss.get('torch') }} &rarr; {{ r.train.loss.get('mindspore') }}. Max loss difference {{ f(r.train.max_rel_diff) }} relative (tolerance {{ r.train.rtol }}){% if r.train.first_divergent_step is not none %}; the losses part at step {{ r.train.first_divergent_step }}{% endif %}. {{ r.train.note }}</p>
{{ loss_svg|safe }}
<h3>Losses</h3>
<table><tr><th>step</th><th>torch</th><th>MindSpore</th><th>relative difference</th></tr>
{% for i in range(r.train.losses.get('torch', [])|length) %}<tr class="{{ 'div' if r.train.rel_diff[i] > r.train.rtol else '' }}"><td class="num">{{ i }}</td><td class="num">{{ '%.8g'|format(r.train.losses.torch[i]) }}</td><td class="num">{{ '%.8g'|format(r.train.losses.mindspore[i]) }}</td><td class="num">{{ f(r.train.rel_diff[i]) }}</td></tr>{% endfor %}</table>
<h3>Final weights</h3>
{{ params(r.train.weights, False) }}{% endif %}
{% if r.diagnostics %}<h2>Diagnostics</h2><table><tr><th>code</th><th>severity</th><th>where</th><th>message</th><th>fix</th></tr>{% for d in r.diagnostics %}<tr><td><code>{{ d.code }}</code></td><td>{{ d.severity }}</td><td>{% if d.line %}<code>{{ d.file }}:{{ d.line }}</code>{% endif %}</td><td>{{ d.message }}</td><td>{{ d.suggestion }}</td></tr>{% endfor %}</table>{% endif %}
<p class="dim">report schema {{ schema }}</p>
"""

_OUTPUTS = r"""<table><tr><th>output</th><th>shape</th><th>dtype</th><th>status</th><th>grade</th><th>max abs</th><th>max rel</th><th>mean abs</th><th>cosine</th><th>0.1 %</th><th>0.5 %</th><th>rtol / atol</th><th>NaN/Inf</th><th>note</th></tr>
{% for o in r.outputs %}<tr class="{{ '' if o.allclose else 'div' }}"><td>{{ o.key }}{% if o.constant %} <span class="badge warn">constant</span>{% endif %}</td><td>{{ (o.ref_shape or [])|join('x') }}</td><td>{{ o.ref_dtype }} / {{ o.ms_dtype }}</td><td>{{ o.status }}</td><td>{{ o.grade }}</td>
<td class="num">{{ f(o.max_abs) }}</td><td class="num">{{ f(o.max_rel) }}</td><td class="num">{{ f(o.mean_abs) }}</td><td class="num">{{ f(o.cosine) }}</td><td class="num">{{ f(o.ratio_1e3) }}</td><td class="num">{{ f(o.ratio_5e3) }}</td><td class="num">{{ o.rtol }} / {{ o.atol }}</td>
<td>{% if o.nonfinite %}{{ o.nonfinite.ref.nan }}+{{ o.nonfinite.ref.inf }} / {{ o.nonfinite.ms.nan }}+{{ o.nonfinite.ms.inf }}{% endif %}</td><td>{{ o.message }}</td></tr>
{% endfor %}</table>"""

_PARAMS = r"""<table><tr><th>torch</th><th>MindSpore</th><th>layer</th><th>shape</th><th>status</th><th>grade</th><th>max abs</th><th>max rel</th><th>cosine</th>{% if signs %}<th>sign similarity</th>{% else %}<th>moved by training (max abs)</th>{% endif %}<th>note</th></tr>
{% for p in params %}<tr class="{{ 'div' if p.diverged else '' }}"><td>{{ p.name }}</td><td>{{ p.ms_name }}</td><td>{{ p.layer or '<root>' }}</td><td>{{ p.shape|join('x') }}</td><td>{{ p.status }}</td><td>{{ p.grade }}</td><td class="num">{{ f(p.max_abs) }}</td><td class="num">{{ f(p.max_rel) }}</td><td class="num">{{ f(p.cosine) }}</td>{% if signs %}<td class="num">{{ f(p.sign_similarity) }}</td>{% else %}<td class="num">{{ f(p.update) }}</td>{% endif %}<td>{{ p.note }}</td></tr>
{% endfor %}</table>"""


def _env() -> jinja2.Environment:
    return jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined)


def render_parity_body(report) -> str:
    """The parity report's sections (no page around them): for :func:`render_html` and ``mindport migrate``."""
    from markupsafe import Markup

    from mindport.validators.parity.results import SCHEMA_VERSION

    env = _env()
    outputs_t, params_t = env.from_string(_OUTPUTS), env.from_string(_PARAMS)

    def outputs(r):
        return Markup(outputs_t.render(r=r, f=_fmt))

    def params(items, signs):
        return Markup(params_t.render(params=items, signs=signs, f=_fmt))

    fd = report.first_divergent
    cfg_keys = []
    if fd is not None:
        for k in list(fd.torch_config) + list(fd.ms_config):
            if k not in cfg_keys:
                cfg_keys.append(k)
    return env.from_string(_PARITY).render(
        r=report, fd=fd, verdict=report.verdict, svg=error_plot_svg(report) if report.layers else "",
        loss_svg=loss_plot_svg(report.train) if report.train is not None and report.train.losses else "",
        cfg_keys=cfg_keys, f=_fmt, stmt=_statement, outputs=outputs, params=params, schema=SCHEMA_VERSION)


def render_html(report) -> str:
    return html_page(f"mindport parity report: {report.verdict}", render_parity_body(report))


def write_html(report, path: Path) -> None:
    Path(path).write_text(render_html(report), encoding="utf-8")
