"""Rendering a :class:`~mindport.validators.parity.compare.ParityReport`: rich terminal tables, JSON, one-file HTML.

The HTML page is self-contained: inline CSS, the error-by-layer plot as inline SVG (matplotlib), no scripts and
no network fetches. The JSON schema is documented in docs/parity-report.md.
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


# ----------------------------------------------------------------------------------------------------------------
# Terminal

def print_report(report, console=None, max_layers: int = 25) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    verdict = "[bold green]PARITY[/]" if report.ok else "[bold red]DIVERGENCE[/]"
    ref, cand = report.reference, report.candidate
    console.print(f"{verdict}  {ref.get('ref', ref.get('type', ''))}  vs  {cand.get('ref', cand.get('type', ''))}")
    w = report.weights
    if w:
        text = f"weights: {w.get('source')}: {w.get('transferred', '?')} transferred"
        if w.get("missing") or w.get("unexpected"):
            text += f", missing {len(w.get('missing', []))}, unmatched {len(w.get('unexpected', []))}"
        console.print(text, style="dim" if w.get("ok") else "yellow")
    if report.ms_error:
        console.print(f"[red]MindSpore model raised:[/] {report.ms_error.splitlines()[0]}")
    for p in report.structure.get("problems", []):
        console.print(f"[red]structure:[/] {p}")

    table = Table(title="outputs", title_justify="left")
    for col in ("output", "shape", "status", "max abs", "max rel", "mean abs", "cosine", "rtol/atol"):
        table.add_column(col, justify="right" if col not in ("output", "status") else "left")
    for o in report.outputs:
        style = "green" if o.allclose else "red"
        table.add_row(o.key, "x".join(map(str, o.ref_shape or [])) or "-", f"[{style}]{o.status}[/]",
                      _fmt(o.max_abs), _fmt(o.max_rel), _fmt(o.mean_abs), _fmt(o.cosine), f"{o.rtol:g}/{o.atol:g}")
        if o.message:
            table.add_row("", "", f"[yellow]{o.message}[/]", "", "", "", "", "")
    if report.outputs:
        console.print(table)

    fd = report.first_divergent
    if report.layers:
        shown = report.layers
        if len(shown) > max_layers:
            start = max(0, (fd.index if fd else 0) - max_layers // 2)
            shown = shown[start:start + max_layers]
        lt = Table(title=f"layers ({len(report.layers)} calls, execution order)", title_justify="left")
        for col in ("#", "path", "torch", "MindSpore", "status", "max abs", "max rel", "cosine"):
            lt.add_column(col, justify="right" if col in ("#", "max abs", "max rel", "cosine") else "left")
        for lr in shown:
            style = "red" if lr.diverged else ("yellow" if lr.causes else "green")
            mark = " <- first" if fd is not None and lr is fd else ""
            lt.add_row(str(lr.index), (lr.path or "<root>") + (f" (call {lr.call})" if lr.call else ""),
                       lr.torch_type, lr.ms_type or "-", f"[{style}]{lr.status}{mark}[/]",
                       _fmt(lr.max_abs), _fmt(lr.max_rel), _fmt(lr.cosine))
        console.print(lt)
    elif report.localization:
        console.print(f"localisation: {report.localization}", style="dim")
    if fd is not None:
        console.print(f"[bold]first divergent layer:[/] {fd.path or '<root>'} ({fd.torch_type} -> {fd.ms_type or '?'})")
        console.print(f"  torch:     {_cfg_text(fd.torch_config)}")
        console.print(f"  MindSpore: {_cfg_text(fd.ms_config)}")
        console.print(f"  [bold]likely cause:[/] {fd.cause or 'unknown'}")
    others = [f for f in report.config_findings if fd is None or f["path"] != fd.path]
    for f in others[:10]:
        tag = "training-only" if f["training_only"] else "setting"
        console.print(f"[yellow]{tag}:[/] {f['path'] or '<root>'}: {f['cause']}")
    g = report.graph
    gstyle = {"ok": "green", "mismatch": "red", "failed": "yellow"}.get(g.status, "dim")
    text = f"graph mode: [{gstyle}]{g.status}[/]"
    if g.status == "ok":
        text += f" (compiled, equal to PyNative, max abs {_fmt(g.max_abs)})"
    elif g.status == "mismatch":
        text += f" (outputs differ from PyNative, max abs {_fmt(g.max_abs)})"
    elif g.status == "failed":
        text += f" at {g.location or '?'}: {(g.error.splitlines() or [''])[0]}"
    console.print(text)


# ----------------------------------------------------------------------------------------------------------------
# HTML

def error_plot_svg(report) -> str:
    """Max abs error (and max error relative to the layer's scale) by layer, as an inline SVG string."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state, faster import

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
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>mindport parity report: {{ verdict }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
.badge { padding: 2px 10px; border-radius: 4px; color: white; }
.ok { background: #2e7d32; } .bad { background: #c62828; } .warn { background: #ef6c00; }
table { border-collapse: collapse; font-size: 0.85em; } td, th { border: 1px solid #ccc; padding: 3px 8px; }
th { background: #f3f3f3; text-align: left; } td.num { text-align: right; font-family: monospace; }
tr.div td { background: #fdecea; } tr.first td { background: #f8bbb5; font-weight: bold; }
pre { background: #f6f6f6; padding: 8px; white-space: pre-wrap; font-size: 0.85em; }
.cfg td { vertical-align: top; font-family: monospace; }
</style></head><body>
<h1>mindport parity report <span class="badge {{ 'ok' if r.ok else 'bad' }}">{{ verdict | upper }}</span></h1>
<h2>Summary</h2>
<table>
<tr><th>reference</th><td>{{ r.reference.get('ref', r.reference.get('type')) }} ({{ r.reference.kind }}){% if r.reference.get('ctor') %} ctor: <code>{{ r.reference.ctor }}</code>{% endif %}</td></tr>
<tr><th>MindSpore</th><td>{{ r.candidate.get('ref', r.candidate.get('type')) }}</td></tr>
<tr><th>inputs</th><td>{% for i in r.settings.get('inputs', []) %}<code>{{ i.get('spec', i.shape|join('x') ~ ':' ~ i.dtype) }}</code> {% endfor %}</td></tr>
<tr><th>tolerances</th><td>rtol {{ r.settings.get('rtol') }}, atol {{ r.settings.get('atol') }} (raised for float16/bfloat16 outputs)</td></tr>
<tr><th>weights</th><td>{{ r.weights.get('source') }}: {{ r.weights.get('transferred', '?') }} transferred{% if r.weights.get('missing') %}; missing: {{ r.weights.missing|join(', ') }}{% endif %}{% if r.weights.get('unexpected') %}; unmatched torch keys: {{ r.weights.unexpected|join(', ') }}{% endif %}</td></tr>
<tr><th>first divergent layer</th><td>{% if fd %}<b>{{ fd.path or '&lt;root&gt;'|safe }}</b> ({{ fd.torch_type }} &rarr; {{ fd.ms_type }}): {{ fd.cause or 'unknown cause' }}{% else %}none{% endif %}</td></tr>
<tr><th>graph mode</th><td>{{ r.graph.status }}{% if r.graph.status == 'ok' %} (compiled; equal to PyNative){% elif r.graph.status == 'failed' %} at {{ r.graph.location or '?' }}{% endif %}</td></tr>
</table>
{% if r.ms_error %}<h2>MindSpore model raised</h2><pre>{{ r.ms_error }}</pre>{% endif %}
{% if r.structure.problems %}<h2>Structure</h2><ul>{% for p in r.structure.problems %}<li>{{ p }}</li>{% endfor %}</ul>{% endif %}
<h2>Outputs</h2>
<table><tr><th>output</th><th>shape</th><th>dtype</th><th>status</th><th>max abs</th><th>max rel</th><th>mean abs</th><th>cosine</th><th>rtol / atol</th><th>NaN/Inf</th><th>note</th></tr>
{% for o in r.outputs %}<tr class="{{ '' if o.allclose else 'div' }}"><td>{{ o.key }}</td><td>{{ (o.ref_shape or [])|join('x') }}</td><td>{{ o.ref_dtype }} / {{ o.ms_dtype }}</td><td>{{ o.status }}</td>
<td class="num">{{ f(o.max_abs) }}</td><td class="num">{{ f(o.max_rel) }}</td><td class="num">{{ f(o.mean_abs) }}</td><td class="num">{{ f(o.cosine) }}</td><td class="num">{{ o.rtol }} / {{ o.atol }}</td>
<td>{% if o.nonfinite %}{{ o.nonfinite.ref.nan }}+{{ o.nonfinite.ref.inf }} / {{ o.nonfinite.ms.nan }}+{{ o.nonfinite.ms.inf }}{% endif %}</td><td>{{ o.message }}</td></tr>
{% endfor %}</table>
{% if fd %}<h2>First divergent layer: {{ fd.path or '&lt;root&gt;'|safe }}</h2>
<table class="cfg"><tr><th></th><th>torch: {{ fd.torch_type }}</th><th>MindSpore: {{ fd.ms_type }}</th></tr>
{% for k in cfg_keys %}<tr><td>{{ k }}</td><td>{{ fd.torch_config.get(k, '') }}</td><td>{{ fd.ms_config.get(k, '') }}</td></tr>{% endfor %}
</table>
<p><b>Likely cause:</b> {{ fd.cause or 'no known trap matches; compare the settings above' }}</p>{% endif %}
{% if r.config_findings %}<h2>Known traps found in the settings</h2><ul>
{% for c in r.config_findings %}<li><code>{{ c.path or '&lt;root&gt;'|safe }}</code>: {{ c.cause }}{% if c.training_only %} <span class="badge warn">training-only</span>{% endif %}</li>{% endfor %}</ul>{% endif %}
<h2>Error by layer</h2>
{% if r.layers %}{{ svg|safe }}{% else %}<p>{{ r.localization or 'no per-layer data' }}</p>{% endif %}
{% if r.layers %}<h2>Layers (execution order)</h2>
<table><tr><th>#</th><th>path</th><th>torch</th><th>MindSpore</th><th>status</th><th>max abs</th><th>max rel</th><th>mean abs</th><th>cosine</th><th>note</th></tr>
{% for lr in r.layers %}<tr class="{{ 'first' if fd and lr.index == fd.index else ('div' if lr.diverged else '') }}"><td class="num">{{ lr.index }}</td><td>{{ lr.path or '&lt;root&gt;'|safe }}{% if lr.call %} (call {{ lr.call }}){% endif %}</td><td>{{ lr.torch_type }}</td><td>{{ lr.ms_type }}</td><td>{{ lr.status }}</td>
<td class="num">{{ f(lr.max_abs) }}</td><td class="num">{{ f(lr.max_rel) }}</td><td class="num">{{ f(lr.mean_abs) }}</td><td class="num">{{ f(lr.cosine) }}</td><td>{{ lr.cause }}</td></tr>
{% endfor %}</table>{% endif %}
<h2>Graph mode</h2>
<p>status: <b>{{ r.graph.status }}</b>; compiled: {{ r.graph.compiled }}; equal to PyNative: {{ r.graph.equal_to_pynative }}{% if r.graph.seconds %}; {{ '%.2f'|format(r.graph.seconds) }} s{% endif %}</p>
{% if r.graph.error %}<pre>{{ r.graph.error }}</pre>{% endif %}
{% if r.diagnostics %}<h2>Diagnostics</h2><ul>{% for d in r.diagnostics %}<li><code>{{ d.code }}</code> [{{ d.severity }}] {{ d.message }}{% if d.suggestion %} &mdash; {{ d.suggestion }}{% endif %}</li>{% endfor %}</ul>{% endif %}
<p style="color:#888;font-size:0.8em">mindport {{ version }}, report schema {{ schema }}</p>
</body></html>
"""


def render_html(report) -> str:
    from mindport import __version__
    from mindport.validators.parity.results import SCHEMA_VERSION

    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined)
    template = env.from_string(_TEMPLATE)
    fd = report.first_divergent
    cfg_keys = []
    if fd is not None:
        for k in list(fd.torch_config) + list(fd.ms_config):
            if k not in cfg_keys:
                cfg_keys.append(k)
    return template.render(r=report, fd=fd, verdict=report.verdict, svg=error_plot_svg(report) if report.layers else "",
                           cfg_keys=cfg_keys, f=_fmt, version=__version__, schema=SCHEMA_VERSION)


def write_html(report, path: Path) -> None:
    Path(path).write_text(render_html(report), encoding="utf-8")
