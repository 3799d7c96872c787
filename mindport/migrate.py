"""``mindport migrate``: the whole job in one call, one report.

1. convert every file of SRC into OUT (``migrator.repo.convert_path``); with a model, once its torch original has been
   built and run on the parity inputs, with the facts that run recorded (``mindport.observed``);
2. build the torch model and its converted port once each, in a process of their own, and in those processes convert
   the torch checkpoint found in SRC or given into ``OUT/<name>.ckpt`` and prove parity (forward, and on request
   gradients and training) of the model given (``validators.parity.compare.validate``; logs in
   ``OUT/mindport-logs/``);
3. emit MindSpore train/eval scripts for it (``templates.render_scripts``);
4. export the proven Cell as MindIR in its process, reload it and compare (``export.export_cell``);
5. write ``OUT/mindport-report.json`` and ``OUT/mindport-report.html``.

Settings come from the arguments, else from ``[migrate]`` in ``SRC/mindport.toml`` (``[mappings] extra`` names the
user's own mapping tables). Steps 2-5 import the project's model module and evaluate ``ctor`` as Python: migrate
runs the project's code (mindport.toml is code too). Step 1 alone never does.
"""
from __future__ import annotations

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
LOGS_DIR = "mindport-logs"  # the side processes' logs (and anything MindSpore writes), inside OUT
OBSERVED_FACTS = f"{LOGS_DIR}/observed-facts.json"  # what the torch run recorded, the conversion's facts
_CONFIG_KEYS = {"model", "ctor", "input", "weights", "rtol", "atol", "target", "exclude", "grad", "train_steps",
                "optimizer", "lr", "loss", "graph"}


@dataclass
class MigrationReport:
    src: str
    out: str
    conversion: object = None  # migrator.repo.ConversionReport
    weights: dict = field(default_factory=dict)
    parity: object = None  # validators.parity.ParityReport
    templates: list[str] = field(default_factory=list)
    launch: list[str] = field(default_factory=list)  # msrun launch scripts of converted torchrun scripts
    problems: list[Diagnostic] = field(default_factory=list)  # steps that could not run, and why
    skipped: list[str] = field(default_factory=list)  # steps not asked for (no model given)
    export: object = None  # export.ExportReport
    seconds: float = 0.0
    models: list[dict] = field(default_factory=list)  # every discovered model's proof (no --model: discovery)
    models_summary: dict | None = None
    observed: dict | None = None  # the torch run's facts the conversion used (a model given), or why none

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
            reasons.append(f"parity {self.parity.outcome}: {self.parity.reason}")
        if self.export is not None and not self.export.ok:
            reasons.append("the MindIR export failed or its outputs differ")
        if self.models_summary:
            m = self.models_summary
            failed = [x for x in self.models if x["status"] in ("diverged", "ms-failed")]
            unproven = [x for x in self.models if x["status"] in ("inconclusive", "stopped")]
            if failed:
                reasons.append(f"{m['diverged']} model(s) diverged and {m['ms_failed']} failed in MindSpore, of "
                               f"{m['built']} built (first: {failed[0]['class']}: "
                               f"{failed[0].get('error') or failed[0]['status']})")
            if unproven:  # no verdict on the port, and no proof either: said apart from the failures
                stopped = m.get("stopped", 0)
                reasons.append(f"{len(unproven)} built model(s) without a verdict ({m.get('inconclusive', 0)} "
                               f"inconclusive, {stopped} stopped by a time or memory limit"
                               f"{': re-run on a less busy machine to prove them' if stopped else ''}; first: "
                               f"{unproven[0]['class']}: {unproven[0].get('error') or unproven[0]['status']})")
            if not (failed or unproven) and m.get("selected") and not m.get("proven"):
                # nothing proven is no proof: a repository whose every model was not built did not "migrate OK"
                first = self.models[0]
                reasons.append(f"none of the {m['selected']} model(s) tried was built (first: {first['class']}: "
                               f"{first.get('reason') or first.get('error') or first['status']}); give the arguments "
                               f"in SRC/mindport.toml [models.\"path.py:Name\"] or with --model/--ctor/--input")
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
            "launch": self.launch,
            "export": self.export.to_json() if self.export is not None else None,
            "problems": [d.to_json() for d in self.problems],
            "skipped": self.skipped,
            "shortfalls": self.shortfalls(),
            **({"models": self.models, "models_summary": self.models_summary} if self.models_summary else {}),
            **({"observed": self.observed} if self.observed is not None else {}),
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
            timeout: float | None = None, max_file_size: int | None = None, grad: bool | None = None,
            train_steps: int | None = None, optimizer: str | None = None, lr: float | None = None,
            loss: str | None = None, graph_mode: bool | None = None, models: str | None = None,
            max_models: int | None = None, model_workers: int = 1, discover: bool = True,
            model_progress=None, observe: bool = True, stub_missing: bool = True) -> MigrationReport:
    """Run the whole migration. Raises InputError for unusable arguments (exit code 2).

    ``progress(text)`` is told each step; ``file_progress(rel, done, total)`` each converted file. ``mappings``:
    the user's mapping tables (overlays), after those ``[mappings] extra`` names in mindport.toml.
    ``timeout``/``max_file_size``: per-file limits of the conversion (default: convert_path's). ``grad``,
    ``train_steps``, ``optimizer``, ``lr``, ``loss``, ``graph_mode``: the parity checks (default: mindport.toml's).
    Without a model, every model class and factory of SRC is discovered, built and proven (``discover=False``: the
    conversion only): ``models`` (a pattern on "path.py:Name") narrows, ``max_models`` caps, ``model_workers``
    side-process pairs prove in parallel, ``model_progress(done, total, entry)`` is told each model.

    With a model and ``observe`` (the default), the source is converted once the torch model has been built and run
    on the parity inputs, with the facts that run recorded (``mindport.observed``): a site that saw only floating
    inputs gets MindSpore's own op instead of the int-to-float guard, a join of one dtype no promotion; the port
    proven is that conversion, and ``OUT/mindport-logs/observed-facts.json`` keeps the facts (``convert --facts``).
    ``observe=False`` converts from the code alone. Without a model, ``observe``: the discovered models are built and
    run in torch under the same recorder, and SRC is converted again with what all those runs saw before the proofs
    (``report.observed``; the same facts file). ``stub_missing``: see ``_prove_discovered``."""
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
    checks = {"grad": grad if grad is not None else bool(config.get("grad", False)),
              "train_steps": train_steps if train_steps is not None else int(config.get("train_steps", 0)),
              "optimizer": optimizer or config.get("optimizer", "sgd"),
              "lr": lr if lr is not None else float(config.get("lr", 0.01)),
              "loss": loss or config.get("loss", "mse"),
              "graph_mode": graph_mode if graph_mode is not None else bool(config.get("graph", True))}
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

    from mindport.migrator.launch import write_launch_scripts

    def convert(facts=None) -> None:
        say(progress, f"converting {src} -> {out}" + (" with the facts of the torch run" if facts else ""))
        report.conversion = convert_path(
            src, out, target=target, jobs=jobs, force=force, exclude=tuple(config.get("exclude", ())),
            progress=file_progress, mappings=tuple(mappings), timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
            max_file_size=DEFAULT_MAX_FILE_SIZE if max_file_size is None else max_file_size, facts=facts)
        report.launch = write_launch_scripts(src, out, SCRIPTS_DIR, report.conversion)

    if not model or not observe:
        convert()
    if not model:
        report.skipped.append("weights, parity, train/eval scripts and MindIR export: no model given "
                              "(--model FILE.py:Name or `model` in mindport.toml)")
        def observed_discovery(facts) -> None:
            """Every discovered model was built and run in torch: convert again with what those runs recorded
            (the ports proven next are the ones written; a site no run reached keeps its run-time helper)."""
            report.observed = _observed_summary(facts, out) if facts is not None else {
                "used": False, "reason": "no discovered model was built and run in torch"}
            if facts is not None:
                convert(facts)
                (out / OBSERVED_FACTS).parent.mkdir(parents=True, exist_ok=True)
                facts.save(out / OBSERVED_FACTS)

        if discover:
            _prove_discovered(report, src, out, models=models, max_models=max_models, workers=model_workers,
                              rtol=rtol, atol=atol, graph_mode=checks["graph_mode"], progress=progress,
                              model_progress=model_progress, stub_missing=stub_missing,
                              observed=observed_discovery if observe else None)
        report.seconds = time.perf_counter() - started
        write_migration_reports(report, out)
        return report

    src_root = src if src.is_dir() else src.parent
    out_root = out if src.is_dir() else out.parent
    target_part, _, name = model.rpartition(":")
    dotted = not target_part.endswith(".py") and not (src_root / target_part).is_dir()
    torch_ref = model if dotted else f"{src_root / target_part}:{name}"
    ms_ref = model if dotted else f"{out_root / target_part}:{name}"

    # 2. weights and parity: each model is built once, in its own process; the checkpoint is converted there, and
    #    the source (step 1) once the torch model has run
    if observe and src.is_dir():
        from mindport.migrator.repo import claim_output

        claim_output(src, out, force)  # before the side processes write their logs into OUT
    ckpt_path = out / (weights.stem + ".ckpt") if weights is not None else None
    say(progress, f"building {name} on both sides" + (f", converting weights {weights}" if weights else "")
        + f", checking parity on {', '.join(inputs)}" + (", exporting MindIR" if export else ""))
    from mindport.validators.parity.compare import validate

    def observed(facts_json) -> None:
        """The torch model is built and has run once: convert with what it recorded (the port proven next)."""
        from mindport.observed import Facts

        facts = Facts(facts_json["files"], facts_json.get("builds"), facts_json.get("forwards")) if facts_json else None
        report.observed = _observed_summary(facts, out)
        convert(facts)
        if facts is not None:
            (out / OBSERVED_FACTS).parent.mkdir(parents=True, exist_ok=True)
            facts.save(out / OBSERVED_FACTS)

    try:
        report.parity = validate(torch_ref, ms_ref, ctor, weights=weights, inputs=inputs, rtol=rtol, atol=atol,
                                 root=src_root, ms_root=out_root, log_dir=out / LOGS_DIR, save_weights=ckpt_path,
                                 export_to=out / EXPORT_DIR / f"{name}.mindir" if export else None,
                                 before_candidate=observed if observe else None, **checks)
    except InputError as exc:  # at the statement that raised (a converted line) when there is one
        if report.conversion is None:  # the torch model failed before it could run: converted without facts
            report.observed = {"used": False, "reason": f"the torch model was not built: {exc.message}"}
            convert()
        site = next((d for d in exc.diagnostics if d.line), None)
        report.problems.append(Diagnostic("MP400", f"parity could not run: {exc.message}", site.file if site else torch_ref,
                                          site.line if site else 0))
    report.weights = _weights_summary(report, weights, ckpt_path)

    # 3. templates, in a folder of their own: the project's own train.py must never be overwritten
    try:
        from mindport.templates import render_scripts

        module_file = target_part.replace(".", "/") + ".py" if dotted else (
            f"{target_part}/__init__.py" if (src_root / target_part).is_dir() else target_part)
        written = render_scripts(out / SCRIPTS_DIR, str((out_root / module_file).resolve()), name, ctor=ctor,
                                 input_spec=inputs[0],
                                 checkpoint=str(ckpt_path.resolve()) if ckpt_path and ckpt_path.exists() else None,
                                 overwrite=True)
        report.templates = [str(p) for p in written]
    except InputError as exc:
        report.problems.append(Diagnostic("MP500", f"train/eval scripts not written: {exc}", str(out)))

    # 4. MindIR: the port deploys (exported in step 2's MindSpore process, from the Cell it proved)
    if not export:
        report.skipped.append("MindIR export: --no-export")
    elif report.parity is not None and report.parity.export is not None:
        from mindport.export import ExportReport

        report.export = ExportReport.from_json(report.parity.export)
        if not report.export.ok:
            report.problems.append(report.export.diagnostic(ms_ref))  # at the cause's converted line
    else:
        report.problems.append(Diagnostic("MP601", "MindIR export did not run: the MindSpore model " + (
            "raised (MP401 above)" if report.parity is not None and report.parity.ms_error else "was not built"),
            ms_ref))
    report.seconds = time.perf_counter() - started
    write_migration_reports(report, out)
    return report


def read_model_settings(src: Path) -> dict[str, dict]:
    """``[models."path.py:Name"]`` tables of SRC/mindport.toml: ``ctor`` and ``input`` for a discovered model."""
    path = src / "mindport.toml" if src.is_dir() else src.parent / "mindport.toml"
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8")).get("models", {})
    out = {}
    for key, value in data.items():
        if not isinstance(value, dict) or set(value) - {"ctor", "input"}:
            raise InputError(f"{path}: [models.{key!r}] takes ctor = \"...\" and input = [\"SHAPE:DTYPE\", ...]")
        if isinstance(value.get("input"), str):
            value["input"] = [value["input"]]
        out[key] = value
    return out


def _prove_discovered(report: MigrationReport, src: Path, out: Path, *, models, max_models, workers, rtol, atol,
                      graph_mode, progress, model_progress, stub_missing=True, observed=None) -> None:
    """No model named: discover every model of SRC and prove each one (``mindport.discovery``).

    ``stub_missing``: a module the repository's own files import and this machine lacks (``tqdm``, ``sklearn``,
    ``h5py``, ``torch_sparse`` at the top of a model file, used by its scripts or helpers) is a stand-in
    (``mindport.discovery.stubs``), as the discovery sweep measures: without it one such import left every model of
    the file unbuilt. A model that really uses the stand-in fails building or running; one proven with stand-ins
    names them (its entry's ``stubbed``)."""
    from mindport.extras import missing as missing_modules

    missing = missing_modules(("numpy", "torch", "mindspore"))
    if missing or not src.is_dir():
        report.skipped.append("proving every model of the repository: " + (
            f"needs pip install 'mindport[full]' ({', '.join(missing)} missing)" if missing else "SRC is one file"))
        return
    from mindport.discovery.prove import ProveSettings, prove_models, summary_line

    settings = read_model_settings(src)
    say(progress, "discovering and proving the repository's models"
        + (f" matching {models!r}" if models else "") + (f" (at most {max_models})" if max_models else ""))
    report.models, report.models_summary = prove_models(
        src, out, pattern=models, max_models=max_models, workers=workers,
        user_ctors={k: v["ctor"] for k, v in settings.items() if "ctor" in v},
        user_inputs={k: v["input"] for k, v in settings.items() if "input" in v},
        settings=ProveSettings(rtol=rtol, atol=atol, graph_mode=graph_mode, stub_missing=stub_missing,
                               observe=observed is not None),
        progress=model_progress, before_proof=observed,
        log_dir=out / LOGS_DIR / "models")
    link_graph_warnings(report.models, report.conversion)
    say(progress, summary_line(report.models_summary))


def link_graph_warnings(models: list[dict], conversion) -> None:
    """A model whose GRAPH_MODE run failed or gave other numbers than PyNative gets the MP107 warnings the
    conversion wrote in its file (``graph_warnings``: "path:line: message"; the error names the first): the sites the
    converter knew a static graph reads otherwise, so the user starts there."""
    if conversion is None:
        return
    said = {f.path: [d for d in f.diagnostics if d.code == "MP107"] for f in conversion.files}
    for entry in models:
        error = entry.get("error") or ""
        if not (error.startswith("GRAPH_MODE failed") or error.startswith("GRAPH_MODE outputs differ")):
            continue
        warnings = said.get(entry["class"].rpartition(":")[0]) or []
        if warnings:
            path = entry["class"].rpartition(":")[0]
            entry["graph_warnings"] = [f"{path}:{d.line}: {d.message}" for d in warnings]
            more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
            entry["error"] = f"{error}; the conversion warned MP107 at {path}:{warnings[0].line}{more}"


def _observed_summary(facts, out: Path) -> dict:
    """What the conversion took from the torch run: the facts file and how many sites it recorded."""
    if facts is None:
        return {"used": False, "reason": "the torch forward raised on the parity inputs (see parity)"}
    return {"used": True, "file": str(out / OBSERVED_FACTS),
            "sites": sum(len(sites) for sites in facts.files.values()), "files": len(facts.files)}


def check_model_ref(src: Path, model: str) -> None:
    """The model reference must name a module in SRC that has Name: defined there or imported (re-exported) there.
    Read with ast: nothing is imported yet."""
    import ast

    from mindport.validators.parity.loading import resolve_model_ref

    root = src if src.is_dir() else src.parent
    target, _, name = model.rpartition(":")
    ref = resolve_model_ref(model if not target.endswith(".py") else f"{root / target}:{name}", root=root)
    path = ref.file
    try:
        tree = ast.parse(path.read_bytes())
    except SyntaxError as exc:
        raise InputError(f"{path}: syntax error at line {exc.lineno}: {exc.msg}") from None
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return  # a star import may bring anything
            defined |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if name not in defined:
        raise InputError(f"{path} has no {name!r}; it defines: {', '.join(sorted(defined)) or 'nothing'}")


def _weights_summary(report: MigrationReport, weights: Path | None, ckpt_path: Path | None) -> dict:
    if weights is None:
        return {"ok": True, "note": "no torch checkpoint found or given: parity uses the torch model's initial "
                                    "weights, transferred to MindSpore"}
    parity = report.parity
    info = parity.weights if parity is not None else {}
    if info.get("output"):
        return {"ok": True, "source": str(weights), "output": info["output"], "parameters": info.get("transferred", 0),
                "dropped": info.get("dropped", []), "map": info.get("map", {})}
    reason = info.get("error") or ("parity could not run" if parity is None else
                                   "weights do not line up with the MindSpore model")
    report.problems.append(Diagnostic("MP300", f"weights not converted: {reason}", str(weights)))
    if parity is not None:
        report.problems.extend(d for d in parity.diagnostics if d.code.startswith("MP30"))
    return {"ok": False, "source": str(weights), "error": reason, "missing": info.get("missing", []),
            "unexpected": info.get("unexpected", [])}


def say(progress, text: str) -> None:
    if progress:
        progress(text)


# ---------------------------------------------------------------------------------------------------- reports

def write_migration_reports(report: MigrationReport, out: Path) -> tuple[Path, Path]:
    from mindport.migrator.tree import atomic_write

    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / "mindport-report.json", out / "mindport-report.html"
    atomic_write(json_path, (json.dumps(report.to_json(), indent=2, default=str) + "\n").encode("utf-8"))
    atomic_write(html_path, render_html(report).encode("utf-8"))
    return json_path, html_path


def render_html(report: MigrationReport) -> str:
    """One self-contained page in the parity report's style: the migration summary, then the parity sections."""
    import jinja2

    from mindport.validators.parity.report import html_page, render_parity_body

    conv = report.conversion
    env = jinja2.Environment(autoescape=True)
    diagnostics = [*(conv.diagnostics if conv else []), *report.problems]
    fixes: dict[str, int] = {}  # each fix text once, numbered; the rows point at it (it was repeated on every row)
    for d in diagnostics:
        if d.suggestion:
            fixes.setdefault(d.suggestion, len(fixes) + 1)
    body = env.from_string(_MIGRATION).render(
        r=report, verdict="OK" if report.ok else "partial", totals=conv.totals() if conv is not None else {},
        files=[f for f in (conv.files if conv else []) if f.status != "copied"],
        diagnostics=diagnostics, fixes=fixes, w=report.weights)
    if report.models_summary:
        body += env.from_string(_MODELS).render(m=report.models_summary, models=report.models)
    if report.parity is not None:
        body += "<h1>Parity</h1>" + render_parity_body(report.parity)
    return html_page(f"mindport migrate: {'OK' if report.ok else 'partial'}", body)


_MIGRATION = r"""
<section id="migration">
<h1>mindport migrate <span class="badge {{ 'ok' if r.ok else 'bad' }}">{{ verdict }}</span></h1>
<p>{{ r.src }} &rarr; {{ r.out }} in {{ '%.1f'|format(r.seconds) }} s</p>
{% for why in r.shortfalls() %}<p><b>partial:</b> {{ why }}</p>{% endfor %}
<h2>Conversion</h2>
<p>{{ totals.get('files', 0) }} files, {{ totals.get('python_lines', 0) }} Python lines, {{ totals.get('sites_converted', 0) }}
API sites converted, {{ totals.get('sites_unconverted', 0) }} left.</p>
<table><tr><th>file</th><th>status</th><th>lines</th><th>sites</th><th>diagnostics</th></tr>
{% for f in files %}<tr><td>{{ f.path }}</td><td>{{ f.status }}</td><td class="num">{{ f.lines }}</td><td class="num">{{ f.sites }}</td><td class="num">{{ f.diagnostics|length }}</td></tr>{% endfor %}</table>
<h2>Diagnostics</h2>
{% if diagnostics %}<table><tr><th>where</th><th>code</th><th>message</th><th>fix</th></tr>
{% for d in diagnostics %}<tr><td><code>{{ d.location() }}</code></td><td><code>{{ d.code }}</code></td><td>{{ d.message }}</td><td>{% if d.suggestion %}<a href="#fix-{{ fixes[d.suggestion] }}">fix {{ fixes[d.suggestion] }}</a>{% endif %}</td></tr>{% endfor %}</table>
{% if fixes %}<h3>Fixes</h3><ol>{% for text in fixes %}<li id="fix-{{ loop.index }}">{{ text }}</li>{% endfor %}</ol>{% endif %}{% else %}<p>none</p>{% endif %}
<h2>Weights</h2>
<table><tr><th>converted</th><td><span class="badge {{ 'ok' if w.get('ok') else 'bad' }}">{{ 'yes' if w.get('ok') else 'no' }}</span></td></tr>
{% if w.get('source') %}<tr><th>torch checkpoint</th><td><code>{{ w.source }}</code></td></tr>{% endif %}
{% if w.get('output') %}<tr><th>MindSpore checkpoint</th><td><code>{{ w.output }}</code></td></tr>{% endif %}
{% if w.get('parameters') is not none %}<tr><th>parameters written</th><td class="num">{{ w.parameters }}</td></tr>{% endif %}
{% if w.get('dropped') %}<tr><th>dropped by design</th><td>{{ w.dropped|join(', ') }}</td></tr>{% endif %}
{% if w.get('missing') %}<tr><th>MindSpore parameters left unfilled</th><td>{{ w.missing|join(', ') }}</td></tr>{% endif %}
{% if w.get('unexpected') %}<tr><th>torch keys unmatched</th><td>{{ w.unexpected|join(', ') }}</td></tr>{% endif %}
{% if w.get('error') %}<tr><th>error</th><td>{{ w.error }}</td></tr>{% endif %}
{% if w.get('note') %}<tr><th>note</th><td>{{ w.note }}</td></tr>{% endif %}
</table>
{% if w.get('map') %}<details><summary>name map ({{ w.map|length }} tensors)</summary>
<table><tr><th>torch key</th><th>MindSpore parameter</th></tr>{% for k, v in w.map.items() %}<tr><td><code>{{ k }}</code></td><td><code>{{ v }}</code></td></tr>{% endfor %}</table></details>{% endif %}
<h2>Train/eval scripts</h2>
<ul>{% for p in r.templates %}<li><code>{{ p }}</code></li>{% else %}<li>none</li>{% endfor %}</ul>
{% if r.launch %}<h2>Distributed launch (msrun)</h2>
<p>These converted scripts started a torch process group (torchrun): run them with the msrun script beside them
(<code>NPROC=N sh launch_NAME.sh</code> on one host; each script says how to run across hosts).</p>
<ul>{% for p in r.launch %}<li><code>{{ p }}</code></li>{% endfor %}</ul>{% endif %}
<h2>MindIR export</h2>
<p>{{ r.export.summary() if r.export is not none else 'not run' }}</p>
{% for s in r.skipped %}<p>{{ s }}</p>{% endfor %}
</section>
"""

_MODELS = r"""
<section id="models">
<h2>Models</h2>
<p>{{ m.discovered }} discovered, {{ m.selected }} tried, {{ m.built }} built, {{ m.proven }} proven,
{{ m.diverged }} diverged, {{ m.inconclusive or 0 }} inconclusive, {{ m.ms_failed }} failed in MindSpore,
{{ m.stopped or 0 }} stopped by a time or memory limit, {{ m.not_built }} not built. Each built model is
compared at its own initialisation and at a random weight draw (every parameter and the running statistics).</p>
<table><tr><th>class</th><th>status</th><th>ctor</th><th>inputs</th><th>max rel</th><th>first divergent</th><th>why</th></tr>
{% for x in models %}<tr><td><code>{{ x['class'] }}</code></td>
<td><span class="badge {{ 'ok' if x.status == 'proven' else ('warn' if x.status in ('not-built', 'inconclusive', 'stopped') else 'bad') }}">{{ x.status }}</span></td>
<td>{% if x.ctor is not none %}<code>({{ x.ctor }})</code>{% endif %}</td><td>{{ (x.inputs or [])|join(', ') }}</td>
<td class="num">{{ '%.3g'|format(x.max_rel) if x.max_rel is not none else '' }}</td>
<td>{% if x.first_divergent %}<code>{{ x.first_divergent.layer }}</code> {{ x.first_divergent.file }}{% if x.first_divergent.line %}:{{ x.first_divergent.line }}{% endif %}{% endif %}</td>
<td>{{ x.get('error') or x.get('reason') or x.get('graph_note') or '' }}</td></tr>{% endfor %}</table>
</section>
"""
