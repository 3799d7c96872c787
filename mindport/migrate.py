"""``mindport migrate``: the whole job in one call, one report.

1. convert every file of SRC into OUT (``migrator.repo.convert_path``);
2. convert the torch checkpoint found in SRC or given into ``OUT/<name>.ckpt`` (``migrator.weights``);
3. prove inference parity of the model given (``validators.parity.validate``);
4. emit MindSpore train/eval scripts for it (``templates.render_scripts``);
5. export it as MindIR, reload it and compare with the Cell (``export.export_mindir``);
6. write ``OUT/mindport-report.json`` and ``OUT/mindport-report.html``.

Settings come from the arguments, else from ``[migrate]`` in ``SRC/mindport.toml`` (``[mappings] extra`` names the
user's own mapping tables). Steps 2-5 import the project's model module and evaluate ``ctor`` as Python: migrate
runs the project's code (mindport.toml is code too). Step 1 alone never does.
"""
from __future__ import annotations

import html
import json
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from mindport import __version__
from mindport.errors import Diagnostic, InputError

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors")
SCRIPTS_DIR = "mindport_scripts"  # where the emitted train/eval scripts go, inside OUT
EXPORT_DIR = "mindport_export"  # where the MindIR export goes, inside OUT
_CONFIG_KEYS = {"model", "ctor", "input", "weights", "rtol", "atol", "target", "exclude"}


@dataclass
class MigrationReport:
    src: str
    out: str
    conversion: object = None  # migrator.repo.ConversionReport
    weights: dict = field(default_factory=dict)
    parity: object = None  # validators.parity.ParityReport
    templates: list[str] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)  # steps that could not run, and why
    skipped: list[str] = field(default_factory=list)  # steps not asked for (no model given)
    export: object = None  # export.ExportReport
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.shortfalls()

    def shortfalls(self) -> list[str]:
        """Why the migration is partial, one phrase per reason (empty: everything converted and proven)."""
        reasons = []
        if self.conversion is None:
            return ["the source was not converted"]
        left = self.conversion.unconverted
        if left:
            first = left[0]
            reasons.append(f"{len(left)} site(s) left to do by hand or not mirrored (first: {first.location()} "
                           f"{first.code} {first.message})")
        if not self.weights.get("ok", True):
            reasons.append("the checkpoint was not converted")
        if self.parity is not None and not self.parity.ok:
            reasons.append("parity failed: the MindSpore model does not match torch")
        if self.export is not None and not self.export.ok:
            reasons.append("the MindIR export failed or its outputs differ")
        for problem in self.problems:
            if problem.code not in ("MP300", "MP601"):  # said above
                reasons.append(f"{problem.code} {problem.message}")
        return reasons

    def to_json(self) -> dict:
        return {
            "tool": {"name": "mindport", "version": __version__},
            "ok": self.ok, "src": self.src, "out": self.out, "seconds": round(self.seconds, 2),
            "conversion": self.conversion.to_json() if self.conversion is not None else None,
            "weights": self.weights,
            "parity": self.parity.to_json() if self.parity is not None else None,
            "templates": self.templates,
            "export": self.export.to_json() if self.export is not None else None,
            "problems": [d.to_json() for d in self.problems],
            "skipped": self.skipped,
            "shortfalls": self.shortfalls(),
        }


def read_config(src: Path) -> dict:
    path = src / "mindport.toml" if src.is_dir() else src.parent / "mindport.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    config = data.get("migrate", {})
    unknown = set(config) - _CONFIG_KEYS
    if unknown:
        raise InputError(f"{path}: unknown key(s) {sorted(unknown)} in [migrate]; allowed: {sorted(_CONFIG_KEYS)}")
    if isinstance(config.get("input"), str):
        config["input"] = [config["input"]]
    return config


def find_checkpoint(src: Path) -> Path | None:
    if src.is_file():
        return None
    found = sorted(p for p in src.rglob("*") if p.suffix in CHECKPOINT_SUFFIXES and ".git" not in p.parts)
    return found[0] if found else None


def migrate(src, out, *, model: str | None = None, ctor: str | None = None, inputs=None, weights=None,
            target: str | None = None, rtol: float | None = None, atol: float | None = None, jobs: int | None = None,
            force: bool = False, progress=None, file_progress=None, mappings=(), export: bool = True,
            timeout: float | None = None, max_file_size: int | None = None) -> MigrationReport:
    """Run the whole migration. Raises InputError for unusable arguments (exit code 2).

    ``progress(text)`` is told each step; ``file_progress(rel, done, total)`` each converted file. ``mappings``:
    the user's mapping tables (overlays), after those ``[mappings] extra`` names in mindport.toml.
    ``timeout``/``max_file_size``: per-file limits of the conversion (default: convert_path's)."""
    started = time.perf_counter()
    src, out = Path(src), Path(out)
    if not src.exists():
        raise InputError(f"{src} does not exist")
    config = read_config(src)
    from mindport.mappings import MappingError, project_overlays

    try:
        mappings = [*project_overlays(src), *mappings]  # [mappings] extra in mindport.toml, then the arguments'
    except MappingError as exc:
        raise InputError(str(exc)) from None
    model = model or config.get("model")
    ctor = ctor if ctor is not None else config.get("ctor", "")
    inputs = list(inputs) if inputs else list(config.get("input", []))
    target = target or config.get("target", "nn")
    rtol = rtol if rtol is not None else float(config.get("rtol", 1e-5))
    atol = atol if atol is not None else float(config.get("atol", 1e-6))
    if weights is None and config.get("weights"):
        weights = src / config["weights"]
    weights = Path(weights) if weights is not None else find_checkpoint(src)
    if weights is not None and not weights.is_file():
        raise InputError(f"checkpoint {weights} does not exist")
    if src.is_dir() and (src / SCRIPTS_DIR).exists():
        raise InputError(f"{src / SCRIPTS_DIR} exists in the source: mindport writes its scripts there in OUT")
    if src.is_dir() and export and model and (src / EXPORT_DIR).exists():
        raise InputError(f"{src / EXPORT_DIR} exists in the source: mindport writes the MindIR export there in OUT")
    if model and not inputs:
        raise InputError(f"parity needs inputs for {model}: give --input SHAPE:DTYPE (e.g. 2x3x32x32:float32) "
                         "or `input = [...]` in mindport.toml")
    if model:
        from mindport.extras import require_full

        require_full("`mindport migrate` with a model (weights, parity, scripts, MindIR export)",
                     ("numpy", "torch", "mindspore", "jinja2", "matplotlib"))
        check_model_ref(src, model)
    for spec in inputs:
        from mindport.validators.parity.loading import parse_input_spec

        parse_input_spec(spec)
    report = MigrationReport(str(src), str(out))

    # 1. source
    from mindport.migrator.repo import convert_path

    from mindport.migrator.repo import DEFAULT_MAX_FILE_SIZE, DEFAULT_TIMEOUT

    say(progress, f"converting {src} -> {out}")
    report.conversion = convert_path(src, out, target=target, jobs=jobs, force=force,
                                     exclude=tuple(config.get("exclude", ())), progress=file_progress,
                                     mappings=tuple(mappings), timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                                     max_file_size=DEFAULT_MAX_FILE_SIZE if max_file_size is None else max_file_size)
    if not model:
        report.skipped.append("weights, parity, train/eval scripts and MindIR export: no model given "
                              "(--model FILE.py:Name or `model` in mindport.toml)")
        report.seconds = time.perf_counter() - started
        write_migration_reports(report, out)
        return report

    model_file, _, name = model.rpartition(":")
    torch_ref = str((src if src.is_dir() else src.parent) / model_file) + ":" + name
    ms_ref = str((out if src.is_dir() else out.parent) / model_file) + ":" + name

    # 2. weights (the checkpoint is also what parity runs with)
    ckpt_path = None
    if weights is not None:
        say(progress, f"converting weights {weights}")
        ckpt_path = out / (weights.stem + ".ckpt")
        report.weights = _convert_weights(weights, ms_ref, ctor, ckpt_path, report)
    else:
        report.weights = {"ok": True, "note": "no torch checkpoint found or given: parity uses the torch model's "
                                              "initial weights, transferred to MindSpore"}

    # 3. parity
    say(progress, f"checking parity of {name} on {', '.join(inputs)}")
    from mindport.validators.parity.compare import validate

    try:
        report.parity = validate(torch_ref, ms_ref, ctor, weights=weights if report.weights.get("ok") else None,
                                 inputs=inputs, rtol=rtol, atol=atol)
    except InputError as exc:
        report.problems.append(Diagnostic("MP400", f"parity could not run: {exc}", torch_ref))

    # 4. templates, in a folder of their own: the project's own train.py must never be overwritten
    try:
        from mindport.templates import render_scripts

        written = render_scripts(out / SCRIPTS_DIR, str((out / model_file).resolve()), name, ctor=ctor,
                                 input_spec=inputs[0],
                                 checkpoint=str(ckpt_path.resolve()) if ckpt_path and ckpt_path.exists() else None,
                                 overwrite=True)
        report.templates = [str(p) for p in written]
    except InputError as exc:
        report.problems.append(Diagnostic("MP500", f"train/eval scripts not written: {exc}", str(out)))

    # 5. MindIR: the port deploys
    if export:
        say(progress, f"exporting {name} as MindIR and checking the reloaded graph")
        from mindport.export import export_mindir

        checkpoint = ckpt_path if ckpt_path is not None and report.weights.get("ok") and ckpt_path.exists() else None
        try:
            report.export = export_mindir(ms_ref, out / EXPORT_DIR / f"{name}.mindir", ctor=ctor, inputs=inputs,
                                          checkpoint=checkpoint, rtol=rtol, atol=atol)
            if not report.export.ok:
                report.problems.append(Diagnostic("MP601", report.export.summary(), ms_ref))
        except InputError as exc:
            report.problems.append(Diagnostic("MP601", f"MindIR export could not run: {exc}", ms_ref))
    else:
        report.skipped.append("MindIR export: --no-export")
    report.seconds = time.perf_counter() - started
    write_migration_reports(report, out)
    return report


def check_model_ref(src: Path, model: str) -> None:
    """``FILE.py:Name`` must name a file in SRC that defines Name (read with ast: nothing is imported yet)."""
    import ast

    from mindport.validators.parity.loading import parse_model_ref

    file_part, _, name = model.rpartition(":")
    root = src if src.is_dir() else src.parent
    path, name = parse_model_ref(str(root / file_part) + ":" + name)
    try:
        tree = ast.parse(path.read_bytes())
    except SyntaxError as exc:
        raise InputError(f"{path}: syntax error at line {exc.lineno}: {exc.msg}") from None
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    if name not in defined:
        raise InputError(f"{path} has no {name!r}; it defines: {', '.join(sorted(defined)) or 'nothing'}")


def _convert_weights(weights: Path, ms_ref: str, ctor: str, ckpt_path: Path, report: MigrationReport) -> dict:
    from mindport.errors import MigrationError
    from mindport.validators.parity.loading import build_model
    from mindport.migrator.weights import save_weights, transfer_weights

    try:
        cell = build_model(ms_ref, ctor)
        transfer = transfer_weights(str(weights), cell, strict=True)
        save_weights(cell, ckpt_path)
    except MigrationError as exc:  # InputError is a MigrationError too
        report.problems.append(Diagnostic("MP300", f"weights not converted: {exc.message}", str(weights)))
        report.problems.extend(exc.diagnostics)
        return {"ok": False, "source": str(weights), "error": exc.message}
    return {"ok": True, "source": str(weights), "output": str(ckpt_path), "parameters": len(transfer.mapping),
            "dropped": transfer.dropped, "map": transfer.mapping}


def say(progress, text: str) -> None:
    if progress:
        progress(text)


# ---------------------------------------------------------------------------------------------------- reports

def write_migration_reports(report: MigrationReport, out: Path) -> tuple[Path, Path]:
    from mindport.migrator.repo import atomic_write

    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / "mindport-report.json", out / "mindport-report.html"
    atomic_write(json_path, (json.dumps(report.to_json(), indent=2, default=str) + "\n").encode("utf-8"))
    atomic_write(html_path, render_html(report).encode("utf-8"))
    return json_path, html_path


def render_html(report: MigrationReport) -> str:
    """One self-contained page: the migration summary, then the parity report (with its plot) when there is one."""
    esc = html.escape
    conv = report.conversion
    totals = conv.totals() if conv is not None else {}
    rows = "".join(
        f"<tr><td>{esc(f.path)}</td><td>{esc(f.status)}</td><td>{f.lines}</td><td>{f.sites}</td>"
        f"<td>{len(f.diagnostics)}</td></tr>" for f in (conv.files if conv else []) if f.status != "copied")
    diags = "".join(
        f"<tr><td>{esc(d.location())}</td><td>{esc(d.code)}</td><td>{esc(d.message)}</td><td>{esc(d.suggestion)}</td></tr>"
        for d in [*(conv.diagnostics if conv else []), *report.problems])
    verdict = "OK" if report.ok else "partial"
    section = f"""
<section id="migration">
<h1>mindport migrate: {esc(verdict)}</h1>
<p>{esc(report.src)} &rarr; {esc(report.out)} in {report.seconds:.1f} s</p>
{"".join(f"<p><b>partial:</b> {esc(r)}</p>" for r in report.shortfalls())}
<h2>Conversion</h2>
<p>{totals.get('files', 0)} files, {totals.get('python_lines', 0)} Python lines, {totals.get('sites_converted', 0)}
API sites converted, {totals.get('sites_unconverted', 0)} left.</p>
<table><tr><th>file</th><th>status</th><th>lines</th><th>sites</th><th>diagnostics</th></tr>{rows}</table>
<h2>Diagnostics</h2>
{"<p>none</p>" if not diags else f"<table><tr><th>where</th><th>code</th><th>message</th><th>fix</th></tr>{diags}</table>"}
<h2>Weights</h2>
<pre>{esc(json.dumps({k: v for k, v in report.weights.items() if k != "map"}, indent=2, default=str))}</pre>
<h2>Train/eval scripts</h2>
<ul>{"".join(f"<li>{esc(p)}</li>" for p in report.templates) or "<li>none</li>"}</ul>
<h2>MindIR export</h2>
<p>{esc(report.export.summary()) if report.export is not None else "not run"}</p>
{"".join(f"<p>{esc(s)}</p>" for s in report.skipped)}
</section>
"""
    if report.parity is not None:
        from mindport.validators.parity.report import render_html as parity_html

        page = parity_html(report.parity)
        marker = page.find("<body")
        if marker != -1:
            end = page.find(">", marker) + 1
            return page[:end] + section + "<h1>Parity</h1>" + page[end:]
    style = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px}"
    return f"<!doctype html><html><head><meta charset='utf-8'><title>mindport migrate</title><style>{style}</style></head><body>{section}</body></html>"
