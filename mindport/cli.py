"""The `mindport` command line: parse arguments, call the library, print.

Heavy imports (libcst, torch, mindspore) happen inside the commands that need them, so `mindport lint`
and `mindport --help` stay fast.
"""
from __future__ import annotations

import sys

import click

from mindport import __version__

# Exit codes shared by every command: CI can trust them.
EXIT_OK = 0          # everything converted / parity holds / no findings
EXIT_FINDINGS = 1    # something did not convert, parity failed, findings
EXIT_USAGE = 2       # usage or input error


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="mindport")
def main() -> None:
    """Move a PyTorch project to MindSpore, and prove the port is right.

    \b
    The whole job, in one command:
      mindport migrate my_torch_project/ -o my_ms_project/ --model model.py:Net --input 2x3x32x32:float32
    Or step by step:
      mindport convert SRC -o OUT          rewrite PyTorch source to MindSpore source
      mindport weights CKPT -o OUT.ckpt    torch checkpoint -> MindSpore checkpoint
      mindport validate ...                run both models, compare, localise divergence
      mindport lint PATHS                  MindSpore pitfalls and torch leftovers

    Exit codes: 0 success, 1 something did not convert / diverged / was found, 2 usage or input error.
    """


# Each command imports the library code it drives inside its body: `mindport lint` must not pay for
# torch, mindspore or libcst. Add a command above the end marker; keep its body to parse/call/print.


@main.command(context_settings={"max_content_width": 100})
@click.option("--model", "model_ref", required=True, metavar="FILE.py:Name",
              help="MindSpore model file and the class (or factory function) in it.")
@click.option("--ctor", default="", metavar="ARGS", help='Constructor arguments as Python source, e.g. "num_classes=10".')
@click.option("--input", "input_specs", multiple=True, metavar="SPEC",
              help="Input shape:dtype, batch first (default 2x3x32x32:float32); repeat for several inputs.")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for train.py, eval.py and data_pipeline.py.")
@click.option("--api", type=click.Choice(["functional", "model"]), default="functional", show_default=True,
              help="Default training style of train.py (value_and_grad step or the Model API).")
@click.option("--optimizer", type=click.Choice(["adamw", "adam", "sgd"]), default="adamw", show_default=True)
@click.option("--num-classes", type=int, default=None, help="Number of classes (default: read from the model output).")
@click.option("--checkpoint", default=None, metavar="CKPT", help="MindSpore checkpoint the scripts start from.")
@click.option("--dataset", default=None, metavar="FILE.py:Class",
              help="Your dataset class (numpy samples); default: .npz arrays or synthetic data.")
@click.option("--dataset-ctor", default="", metavar="ARGS",
              help='Its constructor arguments; may use `split` ("train"/"eval"), e.g. "root=\'data\', split=split".')
@click.option("--force", is_flag=True, help="Overwrite existing scripts.")
def scaffold(model_ref, ctor, input_specs, out_dir, api, optimizer, num_classes, checkpoint, dataset, dataset_ctor, force):
    """Write MindSpore train.py / eval.py for a model.

    \b
    Example:
      mindport scaffold --model converted/model.py:Net --ctor "num_classes=10" \\
          --input 2x3x32x32:float32 -o converted/
      python converted/train.py --steps 2     # two steps on synthetic data
      python converted/eval.py                # accuracy, precision, recall, confusion matrix

    Paths in --model, --dataset and --checkpoint are relative to the current folder.
    """
    import os

    from mindport.errors import InputError
    from mindport.templates import render_scripts, split_ref

    try:
        model_file, class_name = split_ref(model_ref)
        dataset_abs = None
        if dataset:
            dataset_file, dataset_class = split_ref(dataset)
            dataset_abs = f"{os.path.abspath(dataset_file)}:{dataset_class}"
        paths = render_scripts(
            out_dir,
            os.path.abspath(model_file),
            class_name,
            ctor=ctor,
            input_spec=list(input_specs) or "2x3x32x32:float32",
            num_classes=num_classes,
            optimizer=optimizer,
            api=api,
            checkpoint=os.path.abspath(checkpoint) if checkpoint else None,
            dataset=dataset_abs,
            dataset_ctor=dataset_ctor,
            overwrite=force,
        )
    except InputError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for path in paths:
        click.echo(f"wrote {path}")
    sys.exit(EXIT_OK)


@main.command(context_settings={"max_content_width": 100})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, metavar="CODES",
              help="Only these codes or prefixes, comma-separated or repeated (e.g. MS1,MS201). Default: all.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these codes or prefixes (added to the config's).")
@click.option("--fix", is_flag=True, help="Apply safe autofixes in place (MS107, MS209, MS210, MS415, MS417), then report the rest.")
@click.option("--output-format", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="text: path:line:col: CODE message; github: PR annotations.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip matching files/folders (added to the config's).")
@click.option("--isolated", is_flag=True, help="Ignore [tool.mindport.lint] in pyproject.toml.")
@click.option("--explain", metavar="CODE", help="Print the documentation of one rule and exit.")
@click.option("--list-rules", is_flag=True, help="Print every rule code and name and exit.")
def lint(paths, select, ignore, fix, output_format, exclude, isolated, explain, list_rules):
    """Check MindSpore code for migration pitfalls and PyTorch leftovers.

    \b
    Codes (one page each in docs/rules/, or `mindport lint --explain MS101`):
      MS001       syntax error (always reported)
      MS1xx       the migration guide's seven pitfalls (dataset ops, dynamic shape,
                  mixed precision, Ascend fp16/stride, distributed seed, Cell lists)
      MS2xx       default-value traps (Conv pad_mode/has_bias, pool stride, BN momentum, ...)
      MS3xx       torch leftovers (.cuda(), .backward(), zero_grad(), x.size(0), forward, ...)
      MS4xx       static-graph syntax in construct/@jit (try, yield, del, sets, numpy, ...)
      MS5xx       optimizer/loss semantics (AdamWeightDecay, weight_decay, int64 labels, ...)

    \b
    Examples:
      mindport lint converted/                      every .py file below converted/
      mindport lint model.py --select MS1,MS2       only pitfalls and default traps
      mindport lint src/ --ignore MS301 --fix       autofix what is safe, report the rest
      mindport lint src/ --output-format sarif > lint.sarif

    \b
    Silence one line:   x = [nn.Dense(2, 2)]  # noqa: MS107   (a bare `# noqa` silences all)
    Configure in pyproject.toml (found by walking up from the linted paths):
      [tool.mindport.lint]
      select = ["MS1", "MS2", "MS3"]
      ignore = ["MS104"]
      exclude = ["generated/*"]
      device-target = "Ascend"    # enable the Ascend-only checks for every file

    Exit codes: 0 clean, 1 findings, 2 usage error or unreadable input.
    """
    from mindport.validators import lint as linting
    from mindport.validators.lint.config import ConfigError
    from mindport.validators.lint.output import render

    if list_rules:
        for rule in linting.all_rules():
            click.echo(f"{rule.code}  {rule.name:34} {rule.message}")
        sys.exit(EXIT_OK)
    if explain:
        rule = linting.REGISTRY.get(explain.strip().upper())
        if rule is None:
            click.echo(f"error: unknown rule code {explain!r} (see --list-rules)", err=True)
            sys.exit(EXIT_USAGE)
        from mindport.validators.lint.docs import rule_page

        click.echo(rule_page(rule).split("\n", 1)[1].lstrip())
        sys.exit(EXIT_OK)
    if not paths:
        click.echo("error: give at least one file or folder to lint (see mindport lint --help)", err=True)
        sys.exit(EXIT_USAGE)
    try:
        result = linting.lint_paths(paths, select=list(select) or None, ignore=list(ignore), fix=fix,
                                    exclude=list(exclude), use_config=not isolated)
    except (linting.UsageError, ConfigError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for problem in result.errors:
        click.echo(problem.format(), err=True)
    text = render(result, output_format)
    if text:
        click.echo(text)
    sys.exit(result.exit_code)


@main.command(context_settings={"max_content_width": 100})
@click.argument("src", type=click.Path(dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="Output checkpoint: OUT.ckpt or OUT.safetensors.")
@click.option("--model", "model_ref", default=None, metavar="FILE.py:Name",
              help="The converted MindSpore model (class or factory); names and shapes are checked against it.")
@click.option("--ctor", default="", metavar="ARGS", help='Constructor arguments as Python source, e.g. "num_classes=10".')
@click.option("--name-map", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help='JSON/TOML {torch key or prefix.: MindSpore name} overriding the automatic map ("" drops a key).')
@click.option("--emit-map", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the name map used, as JSON, for audit (reusable as --name-map).")
@click.option("--strict/--allow-missing", default=True, show_default=True,
              help="Fail when any key or parameter is unmatched, or report it and write the rest.")
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
def weights(src, out, model_ref, ctor, name_map, emit_map, strict, force):
    """Convert a PyTorch checkpoint to a MindSpore checkpoint.

    \b
    Example:
      mindport weights resnet.pth -o resnet.ckpt --model converted/model.py:ResNet --ctor "num_classes=10"
      mindport weights model.safetensors -o ms.safetensors --model converted/model.py:Net --emit-map map.json

    SRC is a torch state_dict (.pt/.pth/.bin, loaded with weights_only=True, never a pickled model) or a
    .safetensors file. Names follow the mapping tables (BatchNorm weight -> gamma, Embedding weight ->
    embedding_table, ...); every MindSpore parameter must be filled exactly once. Without --model, names are
    kept as they are (after --name-map). The output is written to a temporary file and renamed, so a failure
    leaves nothing behind. Exit codes: 0 written, 1 unmatched keys or parameters, 2 input error.
    """
    import json
    import os

    from rich.console import Console

    from mindport.errors import InputError, MigrationError

    console = Console(stderr=True, highlight=False)
    try:
        from mindport.migrator import weights as w

        if os.path.exists(out) and not force:
            raise InputError(f"{out} exists; pass --force to overwrite it")
        mapping = w.read_name_map(name_map) if name_map else None
        state = w.load_state_dict(src)
        if model_ref:
            from mindport.validators.parity.loading import build_model

            cell = build_model(model_ref, ctor)
            plan, report = w.plan_transfer(state, cell, mapping)
            for diag in report.diagnostics:
                style = "red" if diag.severity == "error" else "yellow" if diag.severity == "warning" else "dim"
                console.print(f"[{style}]{diag.code} {diag.message}"
                              + (f" ({diag.suggestion})" if diag.suggestion else "") + "[/]", markup=True)
            if not report.ok and (strict or report.errors and any(d.code == "MP302" for d in report.errors)):
                console.print(f"[red]not written: {len(report.missing)} parameter(s) unfilled, "
                              f"{len(report.unexpected)} torch key(s) unmatched[/] (--allow-missing writes the rest)")
                sys.exit(EXIT_FINDINGS)
            w.write_weights(state, plan, out, overwrite=True)
            summary = f"{len(plan.items)} tensors, {len(report.dropped)} dropped, {len(report.missing)} missing"
        else:
            plan = w.convert_checkpoint(state, out, mapping, overwrite=True)
            summary = f"{len(plan.items)} tensors (names kept; pass --model to check them), {len(plan.dropped)} dropped"
        if emit_map:
            with open(emit_map, "w", encoding="utf-8") as f:
                json.dump(plan.to_json(), f, indent=1)
    except MigrationError as exc:
        console.print(f"error: {exc}", markup=False)
        sys.exit(EXIT_USAGE if isinstance(exc, InputError) else EXIT_FINDINGS)
    console.print(f"[green]wrote {out}[/]: {summary}")
    sys.exit(EXIT_OK)


@main.command(context_settings={"max_content_width": 100})
@click.option("--torch", "torch_ref", required=True, metavar="FILE.py:Name|FILE.onnx",
              help="Reference: the PyTorch model file and class/factory, or an exported .onnx model.")
@click.option("--ms", "ms_ref", required=True, metavar="FILE.py:Name", help="The converted MindSpore model.")
@click.option("--ctor", default="", metavar="ARGS",
              help="Constructor arguments as Python source, evaluated in each side's own module.")
@click.option("--weights", "weights_path", default=None, metavar="FILE",
              help="torch checkpoint (.pt/.pth/.bin/.safetensors) loaded into both sides "
                   "(default: the torch model's seeded init, or the ONNX initializers).")
@click.option("--input", "input_specs", multiple=True, metavar="SPEC",
              help="SHAPE:DTYPE (seeded normal floats), SHAPE:DTYPE:LO:HI (integers in [LO, HI)) or a "
                   ".npy/.npz file; repeat for several positional inputs.")
@click.option("--rtol", type=float, default=1e-5, show_default=True, help="Relative tolerance (float32).")
@click.option("--atol", type=float, default=1e-6, show_default=True, help="Absolute tolerance (float32).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the inputs and of the init.")
@click.option("--report", "report_paths", multiple=True, metavar="FILE.json|FILE.html",
              help="Write the report; the suffix picks the format; repeat for both.")
@click.option("--no-localize", is_flag=True, help="Skip the layer-by-layer comparison.")
@click.option("--no-graph", is_flag=True, help="Skip the GRAPH_MODE run.")
def validate(torch_ref, ms_ref, ctor, weights_path, input_specs, rtol, atol, seed, report_paths, no_localize,
             no_graph):
    """Run the torch model and its MindSpore port on the same inputs and weights; find the first divergent layer.

    \b
    Examples:
      mindport validate --torch model.py:Net --ms converted/model.py:Net \\
          --ctor "num_classes=10" --input 2x3x32x32:float32 --report parity.html
      mindport validate --torch gpt.py:GPT --ms ms/gpt.py:GPT --ctor "GPTConfig(n_layer=2)" \\
          --input 2x16:int64:0:1000 --weights gpt.pt --report parity.json --report parity.html
      mindport validate --torch exported.onnx --ms converted/model.py:resnet18 --input x.npy

    \b
    Both models run in inference mode (torch eval(), Cell set_train(False)); the Cell runs in PyNative and
    again in GRAPH_MODE. Outputs of any nesting are matched by position/key; NaN/Inf must sit in the same
    places. The report names the first divergent layer, both layers' settings and the known trap behind it.
    Exit codes: 0 parity, 1 divergence, 2 usage or input error.
    """
    from mindport.errors import InputError

    try:
        for path in report_paths:
            if not path.lower().endswith((".json", ".html", ".htm")):
                raise InputError(f"--report {path}: the suffix must be .json or .html")
        from mindport.validators.parity.compare import validate as run_validate
        from mindport.validators.parity.compare import write_reports
        from mindport.validators.parity.report import print_report

        report = run_validate(torch_ref, ms_ref, ctor=ctor, weights=weights_path, inputs=list(input_specs),
                              rtol=rtol, atol=atol, seed=seed, localize=not no_localize, graph_mode=not no_graph)
        print_report(report)
        for path in write_reports(report, report_paths):
            click.echo(f"wrote {path}")
    except InputError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _fail_input(exc) -> None:
    """Usage or input error: one clear message on stderr, exit code 2."""
    _console(stderr=True).print(f"[bold red]error:[/] {exc}", markup=True)
    sys.exit(EXIT_USAGE)


def _print_conversion(report, console, limit: int = 30) -> None:
    from rich.table import Table

    totals = report.totals()
    table = Table(title="conversion", show_lines=False)
    for col in ("files", "python lines", "API sites converted", "left unconverted"):
        table.add_column(col, justify="right")
    table.add_row(str(totals["files"]), str(totals["python_lines"]), str(totals["sites_converted"]),
                  str(totals["sites_unconverted"]))
    console.print(table)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(totals["by_status"].items()))
    console.print(f"files: {statuses}")
    diagnostics = report.diagnostics
    for diag in diagnostics[:limit]:
        console.print(diag.format(), markup=False)
    if len(diagnostics) > limit:
        console.print(f"... and {len(diagnostics) - limit} more (see the JSON report)")
    if totals["top_unsupported"]:
        console.print("top unconverted APIs: " + ", ".join(f"{api} ({n})" for api, n in totals["top_unsupported"]))


@main.command(context_settings={"max_content_width": 100})
@click.argument("src", type=click.Path(exists=True))
@click.option("-o", "--out", "out", type=click.Path(), help="Output file or folder (a tree is mirrored into it).")
@click.option("--in-place", is_flag=True, help="Rewrite SRC itself (writes FILE.orig backups; refuses OUT inside SRC).")
@click.option("--no-backup", is_flag=True, help="With --in-place: no .orig backups (refused when git shows changes).")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff and write nothing.")
@click.option("--target", type=click.Choice(["nn", "mint"]), default="nn", show_default=True,
              help="nn: mindspore.nn/ops (CPU, GPU, Ascend). mint: torch-aligned mindspore.mint (Ascend), and the "
                   "nn mapping for APIs mint lacks.")
@click.option("--ms-version", default=None, metavar="X.Y", help="MindSpore version to write for (default: installed).")
@click.option("--jobs", "-j", type=int, default=None, help="Worker processes (default: all cores).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Paths (relative to SRC) to skip; repeatable.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json prints the full report (every site) on stdout, for CI.")
@click.option("--force", is_flag=True, help="Write into an existing OUT that mindport did not create.")
def convert(src, out, in_place, no_backup, show_diff, target, ms_version, jobs, exclude, fmt, force):
    """Rewrite PyTorch source (a file, a repository, notebooks) into MindSpore source.

    \b
    Examples:
      mindport convert model.py -o ms/model.py
      mindport convert my_repo/ -o my_repo_ms/ --exclude 'tests/*'
      mindport convert my_repo/ --diff | less
    Comments and layout are kept. Whatever cannot be converted keeps its code with a
    `# mindport: MP1xx ...` comment and is listed (file:line:col, reason, fix); the output always parses.
    Non-Python files are copied; requirements*.txt and pyproject.toml get mindspore instead of torch.
    OUT/mindport-report.json lists every site. Exit: 0 all converted, 1 something left, 2 usage/input error.
    """
    import json

    from mindport.errors import InputError
    from mindport.migrator.repo import convert_path

    version = None
    if ms_version:
        try:
            major, minor = (int(v) for v in ms_version.split(".")[:2])
            version = (major, minor)
        except ValueError:
            _fail_input(f"--ms-version {ms_version!r}: expected X.Y, e.g. 2.10")
    if not (out or in_place or show_diff):
        _fail_input("give -o OUT, --in-place or --diff")
    try:
        report = convert_path(src, out, target=target, ms_version=version, jobs=jobs, exclude=exclude,
                              in_place=in_place, backup=not no_backup, diff=show_diff, force=force)
    except InputError as exc:
        _fail_input(exc)
    if show_diff:
        for f in report.files:
            if f.diff:
                click.echo(f.diff, nl=False)
    elif out and not in_place:
        from pathlib import Path

        root = Path(out) if Path(src).is_dir() else Path(out).parent
        (root / "mindport-report.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        console = _console(stderr=show_diff)
        _print_conversion(report, console)
        if out and not show_diff:
            console.print(f"written to {out}")
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


@main.command(context_settings={"max_content_width": 100})
@click.argument("src", type=click.Path(exists=True))
@click.option("-o", "--out", "out", required=True, type=click.Path(), help="Folder for the MindSpore project.")
@click.option("--model", metavar="FILE.py:Name", help="The network to prove (class or factory), relative to SRC.")
@click.option("--ctor", default=None, metavar="ARGS", help='Its constructor arguments as Python source: "num_classes=10".')
@click.option("--input", "inputs", multiple=True, metavar="SPEC",
              help="Forward input: 2x3x32x32:float32, 2x16:int64:0:1000, or a .npy/.npz file; repeatable.")
@click.option("--weights", type=click.Path(exists=True, dir_okay=False),
              help="torch checkpoint (.pt/.pth/.bin/.safetensors); default: the first one found in SRC.")
@click.option("--target", type=click.Choice(["nn", "mint"]), default=None, help="Target profile (default nn).")
@click.option("--rtol", type=float, default=None, help="Relative tolerance of the parity check (default 1e-5).")
@click.option("--atol", type=float, default=None, help="Absolute tolerance of the parity check (default 1e-6).")
@click.option("--jobs", "-j", type=int, default=None, help="Worker processes for the conversion.")
@click.option("--force", is_flag=True, help="Write into an existing OUT that mindport did not create.")
def migrate(src, out, model, ctor, inputs, weights, target, rtol, atol, jobs, force):
    """Migrate a PyTorch project: convert the code, convert the checkpoint, prove parity, emit train/eval scripts.

    \b
    Example:
      mindport migrate examples/cifar_resnet -o build/demo --weights build/demo-torch/model.pt
    Settings may live in SRC/mindport.toml:
      [migrate]
      model = "model.py:SmallResNet"
      ctor = "num_classes=10"
      input = ["2x3x32x32:float32"]
    Writes OUT/mindport-report.json and OUT/mindport-report.html.
    Exit: 0 everything converted and parity holds, 1 something did not (the summary says what, where, why),
    2 usage or input error.
    """
    from mindport.errors import InputError
    from mindport.migrate import migrate as run_migration

    console = _console()
    try:
        report = run_migration(src, out, model=model, ctor=ctor, inputs=inputs, weights=weights, target=target,
                               rtol=rtol, atol=atol, jobs=jobs, force=force,
                               progress=lambda text: console.print(f"[dim]{text}[/]", markup=True))
    except InputError as exc:
        _fail_input(exc)
    _print_conversion(report.conversion, console)
    if report.weights:
        w = report.weights
        if w.get("ok") and w.get("output"):
            console.print(f"weights: {w['parameters']} parameters -> {w['output']}")
        elif w.get("note"):
            console.print(f"weights: {w['note']}")
    if report.parity is not None:
        from mindport.validators.parity.report import print_report

        print_report(report.parity, console)
    for problem in report.problems:
        console.print(problem.format(), markup=False)
    for note in report.skipped:
        console.print(f"skipped: {note}")
    if report.templates:
        console.print("train/eval scripts: " + ", ".join(report.templates))
    console.print(f"report: {out}/mindport-report.html (and .json)")
    console.print("[bold green]migration OK[/]" if report.ok else "[bold red]migration incomplete[/]", markup=True)
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


@main.group(context_settings={"max_content_width": 100})
def mappings() -> None:
    """Inspect the mapping tables (the data behind convert, weights and the parity proofs).

    \b
    Examples:
      mindport mappings list --status unsupported
      mindport mappings show torch.nn.Conv2d
      mindport mappings coverage            (against the official r2.4 and master tables)
    """


@mappings.command("list")
@click.option("--status", type=click.Choice(["proven", "mapped", "unsupported"]), default=None)
@click.option("--namespace", default=None, metavar="PREFIX", help="Only torch names starting with this.")
def mappings_list(status, namespace):
    """One line per torch API: name, MindSpore target, status."""
    from mindport.mappings import load_registry

    for entry in sorted({id(e): e for e in load_registry()}.values(), key=lambda e: e.torch):
        state = "unsupported" if not entry.supported else ("proven" if entry.example else "mapped")
        if (status and state != status) or (namespace and not entry.torch.startswith(namespace)):
            continue
        click.echo(f"{entry.torch:50} {entry.target('nn') or '-':45} {state}")


@mappings.command("show")
@click.argument("name")
def mappings_show(name):
    """Everything one entry says (NAME: the torch API, e.g. torch.nn.Conv2d)."""
    from mindport.mappings import load_registry

    entry = load_registry().lookup(name)
    if entry is None:
        _fail_input(f"no mapping entry for {name}; try `mindport mappings list --namespace {name.rsplit('.', 1)[0]}`")
    rows = {
        "torch": entry.torch, "kind": entry.kind, "nn target": entry.target("nn"), "mint target": entry.target("mint"),
        "signature": "(" + ", ".join(p.name + (f"={p.default}" if p.default else "") for p in entry.signature or ()) + ")",
        "renames": entry.rename, "value transforms": entry.values, "always written": list(entry.emit),
        "dropped": list(entry.drop), "unsupported arguments": entry.unsupported, "call transforms": list(entry.transforms),
        "weights": entry.weights, "weight transforms": entry.weight_transforms,
        "runs": {k: list(v) for k, v in entry.runs.items()}, "reason": entry.reason, "notes": entry.notes,
        "example": entry.example and {"args": entry.example.args, "inputs": entry.example.inputs},
        "defined in": entry.source,
    }
    for key, value in rows.items():
        if value not in (None, "", {}, [], "()"):
            click.echo(f"{key:22} {value}")


@mappings.command("coverage")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def mappings_coverage(fmt):
    """Coverage against the official tables, by namespace and status (proven/mapped/unsupported/missing)."""
    import json

    from rich.table import Table

    from mindport.mappings.coverage import STATUSES, coverage

    result = coverage()
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
        return
    console = _console()
    for table_name, title in (("r2.4", "official r2.4 table (nn profile)"), ("master", "official master table")):
        table = Table(title=title)
        table.add_column("namespace")
        for status in STATUSES:
            table.add_column(status, justify="right")
        data = result[table_name]
        for ns, counts in data["by_namespace"].items():
            table.add_row(ns, *(str(counts.get(s, 0)) for s in STATUSES))
        total = data["total"]
        table.add_row("[bold]total[/]", *(f"[bold]{total.get(s, 0)}[/]" for s in STATUSES))
        console.print(table)
        rows = sum(total.values())
        console.print(f"{table_name}: {total.get('proven', 0)}/{rows} proven "
                      f"({100 * total.get('proven', 0) / rows:.1f} %), {total.get('unsupported', 0)} unsupported "
                      f"with a reason, {total.get('missing', 0)} missing")
        supported = total.get("proven", 0) + total.get("mapped", 0)
        if supported:
            unproven = data["supported_not_proven"]
            console.print(f"{table_name}: rows with a supported entry: {total.get('proven', 0)}/{supported} proven "
                          f"({100 * total.get('proven', 0) / supported:.1f} %)"
                          + (f"; not proven: {', '.join(unproven)}" if unproven else ""))
    console.print(f"mint profile (master rows): {result['mint_profile']}")
    console.print(f"all entries: {result['all_entries']}")


# --- commands end ---


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
