"""Commands that move and check: weights, validate, lint."""
from __future__ import annotations

import sys

import click

from mindport.cli.app import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    _console,
    _Progress,
    _require_full,
    _training_options,
    main,
)


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
        from mindport.migrator.weights.writing import _output_format

        _output_format(Path(out))  # said before the checkpoint is read or the model imported
        if not Path(out).resolve().parent.is_dir():
            raise InputError(f"-o {out}: the folder {Path(out).parent} does not exist")
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
            from mindport.migrator.tree import atomic_write

            atomic_write(Path(emit_map), json.dumps(plan.to_json(), indent=1).encode("utf-8"))
    except MigrationError as exc:
        console.print(f"error: {exc}", markup=False)
        sys.exit(EXIT_USAGE if isinstance(exc, InputError) else EXIT_FINDINGS)
    console.print(f"[green]wrote {out}[/]: {summary}")
    sys.exit(EXIT_OK)


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
              help="SHAPE:DTYPE (seeded normal floats), SHAPE:DTYPE:LO:HI (integers in [LO, HI)), a "
                   ".npy/.npz file, value:LITERAL (a Python value: value:4, value:'norm', value:None) or "
                   "fn:identity (a function returning its argument); repeat for several positional inputs.")
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
              help="Keep both sides' logs in DIR (default: beside --report, else a temporary folder, removed).")
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
    Verdicts: pass, diverged or inconclusive (a constant reference output that could not be re-checked on
    perturbed weights), each printed with its reason.
    Exit codes: 0 pass, 1 diverged (or GRAPH_MODE failed: --no-graph skips it), 2 usage or input error,
    3 inconclusive.
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
        print_report(report, _console(), exit_code=True)
        for path in write_reports(report, report_paths):
            click.echo(f"wrote {path}")
    except InputError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(report.exit_code)  # 0 pass, 1 diverged, 3 inconclusive


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
