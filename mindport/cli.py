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
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT), as shells report it; nothing is left half-written


class _Main(click.Group):
    """The command group: Ctrl-C ends any command with exit code 130 and one line, never click's "Aborted!" with
    exit code 1 (the code for "something did not convert")."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("\ninterrupted: every file is written whole or not at all; run the command again to finish",
                       err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="mindport")
def main() -> None:
    """Move a PyTorch project to MindSpore, and prove the port is right.

    \b
    The whole job, in one command:
      mindport migrate my_repo/ -o converted/ --model model.py:Net --ctor "num_classes=10" --input 2x3x32x32:float32
    Or step by step:
      mindport convert SRC -o OUT          rewrite PyTorch source to MindSpore source
      mindport weights CKPT -o OUT.ckpt    torch checkpoint -> MindSpore checkpoint
      mindport validate ...                run both models, compare, localise divergence
      mindport export ...                  MindIR for deployment, reloaded and checked
      mindport lint PATHS                  MindSpore pitfalls and torch leftovers

    \b
    Which commands run your project's code: migrate, validate, scaffold, export and weights --model import
    your model's module and evaluate --ctor (and the ctor in mindport.toml) as Python: run them on code
    you trust. convert, lint, mappings and weights without --model never run it (checkpoints are read
    without unpickling objects).

    \b
    Install: `pip install mindport` has convert and lint; weights, validate, scaffold, export and migrate's
    parity step need `pip install 'mindport[full]'` (torch, MindSpore, ...).

    Exit codes: 0 success, 1 something did not convert / diverged / was found, 2 usage or input error,
    130 interrupted.
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
          --input 2x3x32x32:float32 -o scripts/
      python scripts/train.py --steps 2     # two steps on synthetic data
      python scripts/eval.py                # accuracy, precision, recall, confusion matrix

    Paths in --model, --dataset and --checkpoint are relative to the current folder. scaffold imports the
    model (and the dataset class) and evaluates --ctor to read the output size: it runs the project's code.
    """
    import os

    from mindport.errors import InputError

    _require_full("scaffold", ("numpy", "mindspore", "jinja2"))
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
      mindport lint converted/model.py --select MS1,MS2      only pitfalls and default traps
      mindport lint converted/ --ignore MS301 --fix          autofix what is safe, report the rest
      mindport lint converted/ --output-format sarif > lint.sarif

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
      mindport weights net.pt -o net.ckpt --model converted/model.py:Net --ctor "num_classes=10"
      mindport weights net.safetensors -o net_ms.safetensors --model converted/model.py:Net \\
          --ctor "num_classes=10" --emit-map map.json

    SRC is a torch state_dict (.pt/.pth/.bin, loaded with weights_only=True, never a pickled model) or a
    .safetensors file. Names follow the mapping tables (BatchNorm weight -> gamma, Embedding weight ->
    embedding_table, ...); every MindSpore parameter must be filled exactly once. Without --model, names are
    kept as they are (after --name-map) and no project code runs; --model imports the converted model's
    module and evaluates --ctor. The output is written to a temporary file and renamed, so a failure
    leaves nothing behind. Exit codes: 0 written, 1 unmatched keys or parameters, 2 input error.
    """
    import json
    import os
    from pathlib import Path

    from mindport.errors import InputError, MigrationError

    _require_full("weights", ("numpy", "torch") + (("mindspore",) if model_ref else ()))
    console = _console(stderr=True)
    try:
        from mindport.migrator import weights as w

        if os.path.exists(out) and not force:
            raise InputError(f"{out} exists; pass --force to overwrite it")
        mapping = w.read_name_map(name_map) if name_map else None
        with _Progress() as progress:
            progress.step(f"reading {src}")
            state = w.load_state_dict(src)
            if model_ref:
                from mindport.validators.parity.loading import build_model

                progress.step(f"building {model_ref} and matching {len(state)} tensors")
                cell = build_model(model_ref, ctor)
                plan, report = w.plan_transfer(state, cell, mapping)
        if model_ref:
            for diag in report.diagnostics:
                style = "red" if diag.severity == "error" else "yellow" if diag.severity == "warning" else "dim"
                console.print(f"[{style}]{diag.code} {diag.message}"
                              + (f" ({diag.suggestion})" if diag.suggestion else "") + "[/]", markup=True)
            if not report.ok and (strict or report.errors and any(d.code == "MP302" for d in report.errors)):
                console.print(f"[red]not written: {len(report.missing)} parameter(s) unfilled, "
                              f"{len(report.unexpected)} torch key(s) unmatched[/] (--allow-missing writes the rest)")
                sys.exit(EXIT_FINDINGS)
        with _Progress() as progress:
            progress.step(f"writing {out}")
            if model_ref:
                w.write_weights(state, plan, out, overwrite=True)
                summary = f"{len(plan.items)} tensors, {len(report.dropped)} dropped, {len(report.missing)} missing"
            else:
                plan = w.convert_checkpoint(state, out, mapping, overwrite=True)
                summary = (f"{len(plan.items)} tensors (names kept; pass --model to check them), "
                           f"{len(plan.dropped)} dropped")
        if emit_map:
            from mindport.migrator.repo import atomic_write

            atomic_write(Path(emit_map), json.dumps(plan.to_json(), indent=1).encode("utf-8"))
    except MigrationError as exc:
        console.print(f"error: {exc}", markup=False)
        sys.exit(EXIT_USAGE if isinstance(exc, InputError) else EXIT_FINDINGS)
    console.print(f"[green]wrote {out}[/]: {summary}")
    sys.exit(EXIT_OK)


def _training_options(fn):
    """--grad and --train-steps with their settings (validate and migrate share them)."""
    options = [
        click.option("--grad", is_flag=True, help="Also compare the gradients of a seeded loss, parameter by "
                                                  "parameter, through the weight map."),
        click.option("--train-steps", type=int, default=None, metavar="N",
                     help="Also train both sides N steps from the same weights on the same seeded batches "
                          "(dropout layers off) and compare the losses and the final weights."),
        click.option("--optimizer", type=click.Choice(["sgd", "adam", "adamw"]), default=None,
                     help="Optimizer for --train-steps (default sgd); MindSpore's comes from the mapping tables."),
        click.option("--lr", type=float, default=None, help="Learning rate for --train-steps (default 0.01)."),
        click.option("--loss", type=click.Choice(["mse", "cross_entropy"]), default=None,
                     help="Loss for --train-steps (default mse, against seeded targets of the outputs' shapes)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@main.command(context_settings={"max_content_width": 100})
@click.option("--torch", "torch_ref", required=True, metavar="REF|FILE.onnx",
              help="Reference: FILE.py:Name, package/module.py:Name, PACKAGE_DIR:Name or pkg.module:Name (under "
                   "--root), a class or factory function; or an exported .onnx model.")
@click.option("--ms", "ms_ref", required=True, metavar="REF", help="The converted MindSpore model, same forms.")
@click.option("--ctor", default="", metavar="ARGS",
              help="Constructor arguments as Python source, evaluated in each side's own module.")
@click.option("--weights", "weights_path", default=None, metavar="FILE",
              help="torch checkpoint (.pt/.pth/.bin/.safetensors) loaded into both sides "
                   "(default: the torch model's seeded init, or the ONNX initializers).")
@click.option("--input", "input_specs", multiple=True, metavar="SPEC",
              help="SHAPE:DTYPE (seeded normal floats), SHAPE:DTYPE:LO:HI (integers in [LO, HI)) or a "
                   ".npy/.npz file; repeat for several positional inputs.")
@click.option("--root", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder the dotted --torch reference (pkg.module:Name) is found under (default: here).")
@click.option("--ms-root", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder the dotted --ms reference is found under (default: --root).")
@click.option("--rtol", type=float, default=1e-5, show_default=True, help="Relative tolerance (float32).")
@click.option("--atol", type=float, default=1e-6, show_default=True, help="Absolute tolerance (float32).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the inputs and of the init.")
@_training_options
@click.option("--optimizer-args", default="", metavar="KW",
              help='More torch optimizer arguments for --train-steps: "momentum=0.9, weight_decay=1e-4".')
@click.option("--grad-rtol", type=float, default=1e-4, show_default=True,
              help="Relative tolerance of --grad (to each gradient's largest magnitude).")
@click.option("--train-rtol", type=float, default=1e-4, show_default=True,
              help="Relative tolerance of --train-steps (per-step loss, final weights).")
@click.option("--report", "report_paths", multiple=True, metavar="FILE.json|FILE.html",
              help="Write the report; the suffix picks the format; repeat for both. The sides' logs go to "
                   "mindport-logs/ beside the first report.")
@click.option("--log-dir", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder for both sides' logs (default: beside --report, else a temporary folder kept on failure).")
@click.option("--no-localize", is_flag=True, help="Skip the layer-by-layer comparison.")
@click.option("--no-graph", is_flag=True, help="Skip the GRAPH_MODE run.")
def validate(torch_ref, ms_ref, ctor, weights_path, input_specs, root, ms_root, rtol, atol, seed, grad, train_steps,
             optimizer, lr, loss, optimizer_args, grad_rtol, train_rtol, report_paths, log_dir, no_localize, no_graph):
    """Run the torch model and its MindSpore port on the same inputs and weights; find the first divergent layer.

    \b
    Examples:
      mindport validate --torch my_repo/model.py:Net --ms converted/model.py:Net \\
          --ctor "num_classes=10" --input 2x3x32x32:float32 --report parity.html
      mindport validate --torch my_repo/model.py:Net --ms converted/model.py:Net --ctor "num_classes=10" \\
          --input 2x3x32x32:float32 --weights net.pt --report parity.json --report parity.html
      mindport validate --torch model:Net --root my_repo --ms model:Net --ms-root converted \\
          --input 2x3x32x32:float32
      mindport validate --torch my_repo/model.py:Net --ms converted/model.py:Net --input 8x3x32x32:float32 \\
          --grad --train-steps 20 --optimizer adamw --lr 1e-3 --loss cross_entropy
      mindport validate --torch net.onnx --ms converted/model.py:Net --ctor "num_classes=10" --input x.npy

    \b
    Each side runs in a process of its own (no module is shared); both models run in inference mode (torch
    eval(), Cell set_train(False)); the Cell runs in PyNative and again in GRAPH_MODE. Outputs of any nesting are
    matched by position/key; NaN/Inf must sit in the same places. The report names the first divergent layer (its
    inputs agree, its output does not), its source lines on both sides, both layers' settings and the known trap
    behind it. A constant reference output is re-checked on perturbed weights.
    Token ids and other integer inputs: --input 2x16:int64:0:1000 (integers in [0, 1000)).
    validate imports both model files and evaluates --ctor: it runs the project's code.
    Exit codes: 0 parity, 1 divergence (or GRAPH_MODE failed: --no-graph skips it), 2 usage or input error.
    """
    from mindport.errors import InputError

    _require_full("validate", ("numpy", "torch", "mindspore", "jinja2", "matplotlib")
                  + (("onnx",) if torch_ref.lower().endswith(".onnx") else ()))
    try:
        for path in report_paths:
            if not path.lower().endswith((".json", ".html", ".htm")):
                raise InputError(f"--report {path}: the suffix must be .json or .html")
        from mindport.validators.parity.compare import (
            parse_optimizer_args,
            write_reports,
        )
        from mindport.validators.parity.compare import validate as run_validate
        from mindport.validators.parity.report import print_report

        if log_dir is None and report_paths:
            from pathlib import Path

            log_dir = str(Path(report_paths[0]).parent / "mindport-logs")
        with _Progress() as progress:
            progress.step("running both models on the same inputs and weights")
            report = run_validate(torch_ref, ms_ref, ctor=ctor, weights=weights_path, inputs=list(input_specs),
                                  rtol=rtol, atol=atol, seed=seed, localize=not no_localize, graph_mode=not no_graph,
                                  grad=grad, train_steps=train_steps or 0, optimizer=optimizer or "sgd",
                                  lr=lr or 0.01, optimizer_args=parse_optimizer_args(optimizer_args),
                                  loss=loss or "mse", train_rtol=train_rtol, grad_rtol=grad_rtol, root=root,
                                  ms_root=ms_root or root, log_dir=log_dir)
        print_report(report, _console())
        for path in write_reports(report, report_paths):
            click.echo(f"wrote {path}")
    except InputError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


def _console(stderr: bool = False):
    """Rich output: on a terminal, its width; anywhere else (CI logs, files, pipes) wide enough that no table
    column is ever cut ("rtol/at…")."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if _isatty(stream) else 1000
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=width)


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _Progress:
    """A rich progress bar on stderr, shown only when stderr is a terminal (logs and pipes get none).

    ``files(rel, done, total)`` advances the bar of a tree conversion; ``step(text)`` shows what runs now (a
    spinner and the time it has taken)."""

    def __init__(self, enabled: bool = True) -> None:
        self._bar = None
        self._task = None
        if enabled and _isatty(sys.stderr):
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                       TimeElapsedColumn)

            self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("[dim]{task.fields[item]}"),
                                 console=_console(stderr=True), transient=True)

    def __enter__(self):
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()

    def files(self, rel: str, done: int, total: int) -> None:
        if self._bar is None:
            return
        if self._task is None:
            self._task = self._bar.add_task("converting", total=total, item="")
        self._bar.update(self._task, completed=done, total=total, item=rel)

    def step(self, text: str) -> None:
        if self._bar is None:
            return
        if self._task is not None:
            self._bar.remove_task(self._task)
        self._task = self._bar.add_task(text, total=None, item="")


def _require_full(command: str, modules=("numpy", "torch", "mindspore")) -> None:
    """Commands of the full install: one clear message and exit code 2 when it is not installed."""
    from mindport.extras import MissingExtraError, require_full

    try:
        require_full(f"`mindport {command}`", modules)
    except MissingExtraError as exc:
        _fail_input(exc)


def _fail_input(exc) -> None:
    """Usage or input error: one clear message on stderr, exit code 2."""
    from rich.markup import escape

    _console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}", markup=True)
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


def _size(text: str | None) -> int | None:
    """``--max-file-size``: bytes, or a number with K/M/G (decimal: 1M = 1,000,000 bytes); 0 = no limit."""
    import re

    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[bB]?\s*", text)
    if not match:
        _fail_input(f"--max-file-size {text!r}: expected bytes or a size such as 500K, 2M")
    value = float(match.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[match.group(2).lower()]
    return int(value) or None


def _mappings_option(func):
    return click.option("--mappings", "mapping_files", multiple=True, type=click.Path(dir_okay=False),
                        metavar="FILE.toml",
                        help="Your own mapping table (the schema of docs/mappings-schema.md): its entries add to or "
                             "replace the bundled ones; repeatable; also `[mappings] extra = [...]` in "
                             "SRC/mindport.toml.")(func)


def _overlay_files(src, mapping_files) -> list:
    """SRC/mindport.toml's ``[mappings] extra``, then --mappings (a later table's entries replace earlier ones)."""
    from mindport.mappings import MappingError, project_overlays

    try:
        return [*project_overlays(src), *mapping_files]
    except MappingError as exc:
        _fail_input(exc)


@main.command(context_settings={"max_content_width": 100})
@click.argument("src", type=click.Path(exists=True))
@click.option("-o", "--out", "out", type=click.Path(), help="Output file or folder (a tree is mirrored into it).")
@click.option("--in-place", is_flag=True, help="Rewrite SRC itself (writes FILE.orig backups; refuses OUT inside SRC).")
@click.option("--no-backup", is_flag=True, help="With --in-place: no .orig backups (refused when git shows changes).")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff on stdout and write nothing.")
@click.option("--target", type=click.Choice(["nn", "mint"]), default="nn", show_default=True,
              help="nn: mindspore.nn/ops (CPU, GPU, Ascend). mint: torch-aligned mindspore.mint (Ascend), and the "
                   "nn mapping for APIs mint lacks.")
@click.option("--ms-version", default=None, metavar="X.Y", help="MindSpore version to write for (default: installed).")
@click.option("--jobs", "-j", type=int, default=None, help="Worker processes (default: all cores).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Paths (relative to SRC) to skip; repeatable.")
@_mappings_option
@click.option("--timeout", type=float, default=120.0, show_default=True, metavar="SECONDS",
              help="Time limit per file; a file over it is copied unchanged with MP299 (0: no limit).")
@click.option("--max-file-size", "max_file_size", default="1M", show_default=True, metavar="SIZE",
              help="Larger Python files are copied unchanged with MP204 (LibCST needs several hundred times a "
                   "file's size in memory); 0: no limit.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json prints the full report (every site) on stdout, for CI.")
@click.option("--force", is_flag=True, help="Write into an existing OUT that mindport did not create.")
def convert(src, out, in_place, no_backup, show_diff, target, ms_version, jobs, exclude, mapping_files, timeout,
            max_file_size, fmt, force):
    """Rewrite PyTorch source (a file, a repository, notebooks) into MindSpore source.

    \b
    Examples:
      mindport convert my_repo/model.py -o converted/model.py
      mindport convert my_repo/ -o converted/ --exclude 'tests/*'
      mindport convert my_repo/ --diff | less
      mindport convert my_repo/ -o converted/ --mappings my_maps.toml
    Comments and layout are kept. Whatever cannot be converted keeps its code with a
    `# mindport: MP1xx ...` comment and is listed (file:line:col, reason, fix); the output always parses.
    Non-Python files are copied, files with nothing to convert byte for byte; requirements*.txt and
    pyproject.toml get mindspore instead of torch. Each file is converted on its own: one that fails,
    crashes or runs past --timeout is copied unchanged with one MP299 line. Symlinks are never followed
    out of SRC; FIFOs, devices and unreadable entries are reported, never opened (docs/diagnostics.md).
    OUT/mindport-report.json lists every site. convert never runs your project's code.
    Exit: 0 all converted, 1 something left or not mirrored, 2 usage/input error, 130 interrupted.
    """
    import json

    from mindport.errors import InputError
    from mindport.migrator.repo import atomic_write, convert_path

    version = None
    if ms_version:
        try:
            major, minor = (int(v) for v in ms_version.split(".")[:2])
            version = (major, minor)
        except ValueError:
            _fail_input(f"--ms-version {ms_version!r}: expected X.Y, e.g. 2.10")
    if not (out or in_place or show_diff):
        _fail_input("give -o OUT, --in-place or --diff")
    overlays = _overlay_files(src, mapping_files)
    try:
        with _Progress(enabled=not show_diff) as progress:  # --diff | less: the pager owns the terminal
            report = convert_path(src, out, target=target, ms_version=version, jobs=jobs, exclude=exclude,
                                  in_place=in_place, backup=not no_backup, diff=show_diff, force=force,
                                  timeout=timeout or None, max_file_size=_size(max_file_size), mappings=overlays,
                                  progress=progress.files)
    except InputError as exc:
        _fail_input(exc)
    if show_diff:
        for f in report.files:
            if f.diff:
                click.echo(f.diff, nl=False)
    elif out and not in_place:
        from pathlib import Path

        root = Path(out) if Path(src).is_dir() else Path(out).parent
        atomic_write(root / "mindport-report.json", (json.dumps(report.to_json(), indent=2) + "\n").encode())
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
@_mappings_option
@_training_options
@click.option("--no-graph", is_flag=True, help="Skip the GRAPH_MODE run of the parity check.")
@click.option("--export/--no-export", "do_export", default=True, show_default=True,
              help="Write OUT/mindport_export/NAME.mindir, reload it and compare it with the Cell.")
@click.option("--force", is_flag=True, help="Write into an existing OUT that mindport did not create.")
def migrate(src, out, model, ctor, inputs, weights, target, rtol, atol, jobs, mapping_files, grad, train_steps,
            optimizer, lr, loss, no_graph, do_export, force):
    """Migrate a PyTorch project: convert the code, convert the checkpoint, prove parity, emit train/eval
    scripts, export MindIR.

    \b
    Example:
      mindport migrate my_repo/ -o converted/ --weights net.pt
    Settings may live in SRC/mindport.toml:
      [migrate]
      model = "model.py:SmallResNet"      (or package/module.py:Name, or pkg.module:Name)
      ctor = "num_classes=10"
      input = ["2x3x32x32:float32"]
      train_steps = 20                    (optional: also grad = true, optimizer, lr, loss, graph = false)
      [mappings]
      extra = ["my_maps.toml"]            (your own mapping tables, see --mappings)

    \b
    Security: with a model (--model or mindport.toml), migrate imports your project's model module and
    evaluates ctor as Python (parity needs to run both models). mindport.toml and --ctor are code: run
    migrate only on projects you trust. Without a model, migrate only converts, which never runs project code.

    Each model is built once, in a process of its own, where the checkpoint is converted, parity checked and
    the proven Cell exported as MindIR. Writes OUT/mindport-report.json and
    OUT/mindport-report.html (the side processes' logs: OUT/mindport-logs/). Without --model this is the light
    install's conversion; with it, it needs pip install 'mindport[full]'.
    Exit: 0 everything converted, parity holds and the export reloads equal; 1 partial (the last line says
    what is left and why); 2 usage or input error; 130 interrupted.
    """
    from mindport.errors import InputError
    from mindport.migrate import migrate as run_migration

    console = _console()
    try:
        with _Progress() as progress:
            def step(text: str) -> None:
                console.print(f"[dim]{text}[/]", markup=True)
                progress.step(text)

            report = run_migration(src, out, model=model, ctor=ctor, inputs=inputs, weights=weights, target=target,
                                   rtol=rtol, atol=atol, jobs=jobs, force=force, progress=step,
                                   file_progress=progress.files, mappings=mapping_files, export=do_export,
                                   grad=grad or None, train_steps=train_steps, optimizer=optimizer, lr=lr,
                                   loss=loss, graph_mode=False if no_graph else None)
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
    if report.export is not None:
        console.print(report.export.summary(), markup=False)
    for problem in report.problems:
        console.print(problem.format(), markup=False)
    for note in report.skipped:
        console.print(f"skipped: {note}")
    if report.templates:
        console.print("train/eval scripts: " + ", ".join(report.templates))
    console.print(f"report: {out}/mindport-report.html (and .json)")
    if report.ok:
        console.print("[bold green]migration OK[/]: everything converted"
                      + (", parity holds, the MindIR export reloads equal" if report.parity is not None else ""),
                      markup=True)
    else:
        from rich.markup import escape

        console.print("[bold yellow]migration partial[/]: " + escape("; ".join(report.shortfalls())), markup=True)
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


@main.command(context_settings={"max_content_width": 100})
@click.option("--model", "model_ref", required=True, metavar="FILE.py:Name",
              help="The MindSpore model file and the class (or factory function) in it.")
@click.option("--ctor", default="", metavar="ARGS", help='Constructor arguments as Python source, e.g. "num_classes=10".')
@click.option("--input", "input_specs", multiple=True, required=True, metavar="SPEC",
              help="SHAPE:DTYPE, SHAPE:DTYPE:LO:HI or a .npy/.npz file; one per input of construct(); repeatable.")
@click.option("--checkpoint", default=None, type=click.Path(dir_okay=False), metavar="CKPT",
              help="MindSpore checkpoint loaded first (default: the model's own initialisation).")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False), metavar="FILE.mindir",
              help="The MindIR file to write.")
@click.option("--rtol", type=float, default=1e-5, show_default=True)
@click.option("--atol", type=float, default=1e-6, show_default=True)
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
def export(model_ref, ctor, input_specs, checkpoint, out, rtol, atol, force):
    """Export a MindSpore model as MindIR, load it back and check it computes what the Cell computes.

    \b
    Example (the checkpoint from `mindport weights`):
      mindport weights net.pt -o net.ckpt --model converted/model.py:Net --ctor "num_classes=10"
      mindport export --model converted/model.py:Net --ctor "num_classes=10" --input 2x3x32x32:float32 \\
          --checkpoint net.ckpt -o net.mindir

    mindspore.export writes the graph for the given input shapes; mindspore.load + nn.GraphCell run it
    again on the same inputs and every output is compared with the Cell's (rtol/atol). export imports the
    model's module and evaluates --ctor (it runs the project's code). The file is written whole or not at all.
    Exit: 0 written and equal, 1 export failed or outputs differ, 2 usage or input error.
    """
    import os

    from mindport.errors import InputError

    _require_full("export", ("numpy", "mindspore"))
    from mindport.export import export_mindir

    console = _console()
    try:
        if os.path.exists(out) and not force:
            raise InputError(f"{out} exists; pass --force to overwrite it")
        with _Progress() as progress:
            progress.step("exporting MindIR and checking the reloaded graph")
            report = export_mindir(model_ref, out, ctor=ctor, inputs=input_specs, checkpoint=checkpoint,
                                   rtol=rtol, atol=atol)
    except InputError as exc:
        _fail_input(exc)
    style = "green" if report.ok else "red"
    from rich.markup import escape

    console.print(f"[{style}]{escape(report.summary())}[/]", markup=True)
    for result in report.outputs:
        if not result.allclose:
            console.print(f"  {result.key}: {result.status} (max abs {result.max_abs}) {result.message}", markup=False)
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


@main.group(context_settings={"max_content_width": 100})
def mappings() -> None:
    """Inspect the mapping tables (the data behind convert, weights and the parity proofs).

    \b
    Examples:
      mindport mappings list --status unsupported
      mindport mappings show torch.nn.Conv2d
      mindport mappings coverage
      mindport mappings prove my_maps.toml

    coverage compares with the official r2.4 and master tables. Your own tables (the same schema,
    docs/mappings-schema.md) extend or override the bundled ones without editing the installed package:
    `mindport convert --mappings my_maps.toml`, or `[mappings] extra = ["my_maps.toml"]` in mindport.toml;
    `mappings prove` proves their entries.
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


@mappings.command("prove")
@click.argument("tables", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="FILE.toml...")
def mappings_prove(tables):
    """Prove the entries of your own mapping tables, as the bundled ones are proven.

    \b
    Example:
      mindport mappings prove my_maps.toml

    Each entry's example is written as a torch snippet in every call style it allows, converted by the real
    converter with your tables on top of the bundled ones, run in torch and in MindSpore on the same inputs,
    and compared (values, shapes, dtypes; the entry's rtol/atol). The schema, examples included, is in
    docs/mappings-schema.md. Then use the tables with `mindport convert --mappings FILE.toml` or
    `[mappings] extra` in mindport.toml. Runs the snippets generated from your examples (not your project).
    Exit: 0 every supported entry proven, 1 a proof failed or an entry has no example, 2 a table does not load.
    """
    _require_full("mappings prove")
    from mindport.mappings import MappingError, overlay_entries, overlays

    console = _console()
    try:
        entries = {id(e): e for table in tables for e in overlay_entries(table)}
        with overlays(tables):
            proven, failures = _prove_entries(list(entries.values()), console)
    except MappingError as exc:
        _fail_input(exc)
    console.print(f"{proven} proof(s) passed, {failures} failed or missing, in {len(tables)} table(s)")
    sys.exit(EXIT_FINDINGS if failures else EXIT_OK)


def _prove_entries(entries, console) -> tuple[int, int]:
    """(proofs passed, proofs failed or entries not provable), one line each."""
    from rich.markup import escape

    from mindport.proofs import applicable_styles, prove

    failures = proven = 0
    for entry in entries:
        if not entry.supported:
            console.print(f"{entry.torch}: unsupported ({entry.reason}): nothing to prove", markup=False)
            continue
        if entry.example is None or entry.example.proof:
            why = "no example" if entry.example is None else \
                f"its proof {entry.example.proof!r} runs only in mindport's own test suite"
            console.print(f"[yellow]NOT PROVEN[/] {escape(entry.torch)}: {escape(why)}", markup=True)
            failures += 1
            continue
        profiles = ["nn"] + (["mint"] if "CPU" in entry.runs.get("mint", ()) else [])
        for profile in (p for p in profiles if entry.target(p)):
            for style in applicable_styles(entry):
                case = escape(f"{entry.torch} [{profile}-{style}]")
                try:
                    result = prove(entry, style, profile=profile)
                except Exception as exc:  # noqa: BLE001 - a failing proof is a finding, with its message
                    failures += 1
                    console.print(f"[red]FAIL[/] {case}", markup=True)
                    console.print("  " + "\n  ".join(str(exc).strip().splitlines()[:12]), markup=False)
                    continue
                proven += 1
                console.print(f"[green]PASS[/] {case}: max abs {result.max_abs:.3g}", markup=True)
    return proven, failures


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


@mappings.command("export-msprobe")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder for the YAML files.")
@click.option("--model", default=None, metavar="REF",
              help="The converted MindSpore model (FILE.py:Name, ...): adds its cell, data and layer mappings.")
@click.option("--ctor", default="", metavar="ARGS", help="Its constructor arguments as Python source.")
@click.option("--root", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder a dotted --model reference is found under (default: here).")
@click.option("--target", type=click.Choice(["nn", "mint"]), default="nn", show_default=True,
              help="Target profile whose API names api_mapping.yaml pairs.")
def mappings_export_msprobe(out_dir, model, ctor, root, target):
    """Write the mapping YAML files msprobe's PyTorch <-> MindSpore compare needs (msprobe otherwise needs them
    written by hand).

    \b
    Files: api_mapping.yaml (-am), and with --model: cell_mapping.yaml (-cm), data_mapping.yaml (-dm),
    layer_mapping.yaml (-lm). Example:
      mindport mappings export-msprobe -o msprobe_maps --model out/model.py:Net --ctor "num_classes=10"
      msprobe -f mindspore compare -i compare.json -o result -cm msprobe_maps/cell_mapping.yaml
    """
    from mindport.errors import InputError
    from mindport.validators.parity.msprobe import export_msprobe

    try:
        written = export_msprobe(out_dir, model=model, ctor=ctor, root=root, profile=target)
    except InputError as exc:
        _fail_input(exc)
    for name, count in written.items():
        click.echo(f"wrote {out_dir}/{name} ({count} entries)")


# --- commands end ---


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
