"""Commands that produce the MindSpore project: convert, migrate, scaffold, export."""
from __future__ import annotations

import sys

import click

from mindport.cli.app import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    _console,
    _fail_input,
    _mappings_option,
    _overlay_files,
    _print_conversion,
    _Progress,
    _require_full,
    _size,
    _training_options,
    main,
)


@main.command(context_settings={"max_content_width": 100})
@click.argument("src", type=click.Path(exists=True))
@click.option("-o", "--out", "out", type=click.Path(), help="Output file or folder (a tree is mirrored into it).")
@click.option("--in-place", is_flag=True, help="Rewrite SRC itself (writes FILE.orig backups; refuses OUT inside SRC).")
@click.option("--no-backup", is_flag=True, help="With --in-place: no .orig backups (refused when git shows changes).")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff on stdout and write nothing.")
@click.option("--target", type=click.Choice(["nn", "mint"]), default="nn", show_default=True,
              help="nn: mindspore.nn/ops (CPU, GPU, Ascend). mint: torch-aligned mindspore.mint (Ascend), and the "
                   "nn mapping for APIs mint lacks.")
@click.option("--device", type=click.Choice(["any", "cpu", "gpu", "ascend"]), default="any", show_default=True,
              help="The device the port is for: any/cpu keep the guards against MindSpore's CPU kernel defects "
                   "(tanh's precision, softmax on rows of all -inf); gpu/ascend write MindSpore's own op there.")
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
@click.option("--force", is_flag=True, help="Write into an existing OUT that mindport did not create; replace one "
                                           "that holds another source's conversion.")
@click.option("--facts", "facts_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A recorded torch run (`mindport observe`): sites it saw only floating inputs at get MindSpore's "
                   "own op instead of the int-to-float guard.")
def convert(src, out, in_place, no_backup, show_diff, target, device, ms_version, jobs, exclude, mapping_files,
            timeout, max_file_size, fmt, force, facts_file):
    """Rewrite PyTorch source (a file, a repository, notebooks) into MindSpore source.

    \b
    Examples:
      mindport convert my_repo/model.py -o converted/model.py
      mindport convert my_repo/ -o converted/ --exclude 'tests/*'
      mindport convert my_repo/ --diff | less
      mindport convert my_repo/ -o converted/ --mappings my_maps.toml
    Comments and layout are kept. Whatever cannot be converted keeps its code with a
    `# mindport: MP1xx ...` comment and is listed (file:line:col, reason, fix); the output always parses.
    Non-Python files are copied, files with nothing to convert byte for byte, and so are a tree's files
    no torch tensor can reach (no import path to torch or a library that may hand one, either way: a gym
    environment beside the training scripts); requirements*.txt and pyproject.toml get mindspore instead
    of torch. Each file is converted on its own: one that fails,
    crashes or runs past --timeout is copied unchanged with one MP299 line. Symlinks are never followed
    out of SRC; FIFOs, devices and unreadable entries are reported, never opened (docs/diagnostics.md).
    A tree's OUT/mindport-report.json lists every site (--format json prints it); a single file writes
    only its output. OUT holds one source's conversion: another source's is refused (--force removes it
    first). convert never runs your project's code.
    Exit: 0 all converted, 1 something left or not mirrored, 2 usage/input error, 130 interrupted.
    """
    import json
    from pathlib import Path

    from mindport.errors import InputError
    from mindport.migrator.repo import convert_path
    from mindport.migrator.tree import atomic_write

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
    facts = None
    if facts_file:
        from mindport.observed import load

        try:
            facts = load(facts_file)
        except ValueError as exc:
            _fail_input(exc)
    try:
        with _Progress(enabled=not show_diff) as progress:  # --diff | less: the pager owns the terminal
            report = convert_path(src, out, target=target, ms_version=version, jobs=jobs, exclude=exclude,
                                  in_place=in_place, backup=not no_backup, diff=show_diff, force=force,
                                  timeout=timeout or None, max_file_size=_size(max_file_size), mappings=overlays,
                                  progress=progress.files, device=device, facts=facts)
    except InputError as exc:
        _fail_input(exc)
    if show_diff:
        for f in report.files:
            if f.diff:
                click.echo(f.diff, nl=False)
    elif out and not in_place and Path(src).is_dir():  # a single file's output is that file, nothing beside it
        atomic_write(Path(out) / "mindport-report.json", (json.dumps(report.to_json(), indent=2) + "\n").encode())
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        console = _console(stderr=show_diff)
        _print_conversion(report, console)
        if out and not show_diff:
            console.print(f"written to {out}")
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


@main.command(context_settings={"max_content_width": 100})
@click.argument("src", type=click.Path(exists=True, file_okay=False))
@click.option("--model", required=True, metavar="FILE.py:Name", help="The network to run (class or factory), relative "
                                                                       "to SRC.")
@click.option("--ctor", default="", metavar="ARGS", help='Its constructor arguments as Python source: "num_classes=10".')
@click.option("--input", "inputs", multiple=True, required=True, metavar="SPEC",
              help="Forward input, as validate takes it: 2x3x32x32:float32, 2x16:int64:0:1000, a .npy file; "
                   "repeatable.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the inputs and of the init.")
@click.option("-o", "--out", "out", required=True, type=click.Path(dir_okay=False), help="The facts file to write.")
def observe(src, model, ctor, inputs, seed, out):
    """Run the torch original once (built, eval(), one forward) and record what each call site of SRC's files
    received: the facts `convert --facts` converts with.

    \b
    Example:
      mindport observe my_repo --model model.py:Net --ctor "num_classes=10" --input 2x3x32x32:float32 -o facts.json
      mindport convert my_repo -o converted --facts facts.json
    Per call site the file holds the torch API called there and the dtypes of its first tensor argument
    (mindport/observed.py). A site the run did not reach keeps its run-time helper in the conversion.
    This command runs your project's code. Exit: 0 recorded, 2 the model could not be built or run.
    """
    import torch

    from mindport.errors import InputError
    from mindport.observed import record
    from mindport.validators.parity.compare import _resolve_inputs
    from mindport.validators.parity.loading import build_model
    from mindport.validators.parity.side_torch import torch_inputs

    try:
        _, arrays = _resolve_inputs(inputs, seed)
        torch.manual_seed(seed)
        with record(src) as facts:
            net = build_model(model, ctor, root=src)
            if isinstance(net, torch.nn.Module):
                net.eval()
            with torch.no_grad():
                net(*torch_inputs(arrays))
    except InputError as exc:
        _fail_input(exc)
    except Exception as exc:  # noqa: BLE001 - the user's forward failed: say where, as validate does
        _fail_input(f"running {model} failed: {type(exc).__name__}: {exc}")
    facts.save(out)
    sites = sum(len(v) for v in facts.files.values())
    _console().print(f"recorded {sites} call sites in {len(facts.files)} files: {out}")
    sys.exit(EXIT_OK)


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
@click.option("--models", "models_pattern", default=None, metavar="PATTERN",
              help='Without --model: prove only the discovered models matching PATTERN ("models/*.py:ResNet*", or a '
                   'part of "path.py:Name"; a notebook\'s class is "nb.ipynb:Name", all of them "*.ipynb:*").')
@click.option("--max-models", type=int, default=None, metavar="N", help="Without --model: prove at most N models.")
@click.option("--model-workers", type=int, default=1, show_default=True, metavar="N",
              help="Without --model: pairs of torch/MindSpore processes proving models in parallel.")
@click.option("--no-models", is_flag=True, help="Without --model: convert only, do not discover and prove models.")
@click.option("--observe/--no-observe", "observe", default=True, show_default=True,
              help="With --model: convert once the torch model has run on the inputs, with what that run saw (a site "
                   "that got only floating inputs gets MindSpore's own op, not the int-to-float guard; "
                   "OUT/mindport-logs/observed-facts.json); without it, converted again with what the torch builds "
                   "and runs of every discovered model saw, before the proofs. --no-observe converts from the code "
                   "alone.")
@click.option("--stub-missing/--no-stub-missing", "stub_missing", default=True, show_default=True,
              help="Without --model: a module the repository's files import and this machine lacks (tqdm, sklearn, "
                   "...) is a stand-in while models are built and proven; a model that uses it fails, one proven "
                   "with stand-ins names them in the report.")
def migrate(src, out, model, ctor, inputs, weights, target, rtol, atol, jobs, mapping_files, grad, train_steps,
            optimizer, lr, loss, no_graph, do_export, force, models_pattern, max_models, model_workers, no_models,
            observe, stub_missing):
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
    Without --model, every nn.Module subclass and model factory of SRC is discovered, built (constructor
    arguments from [models."path.py:Name"] in mindport.toml, the repository's own calls, defaults, then small
    sizes) and proven at its own weights and at a random draw; the report lists each (--models, --max-models
    narrow; --no-models converts only).

    \b
    Security: migrate imports your project's modules and evaluates ctor as Python (parity needs to run both
    models), with a model given and, unless --no-models, without one (every model class is built). mindport.toml
    and --ctor are code: run migrate only on projects you trust. With --no-models, migrate only converts, which
    never runs project code.

    Each model is built once, in a process of its own, where the checkpoint is converted, parity checked and
    the proven Cell exported as MindIR. Writes OUT/mindport-report.json and
    OUT/mindport-report.html (the side processes' logs: OUT/mindport-logs/). Without --model this is the light
    install's conversion; with it, it needs pip install 'mindport[full]'.
    Exit: 0 everything converted, parity holds and the export reloads equal; 1 partial (the last line says
    what is left and why); 2 usage or input error; 130 interrupted.
    """
    from pathlib import Path

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
                                   loss=loss, graph_mode=False if no_graph else None, models=models_pattern,
                                   max_models=max_models, model_workers=model_workers, discover=not no_models,
                                   observe=observe, stub_missing=stub_missing,
                                   model_progress=progress.models)
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
    if report.models_summary:
        _print_models(report, console)
    if report.templates:
        console.print("train/eval scripts: " + ", ".join(report.templates))
    if report.launch:
        console.print("distributed scripts run with msrun: " + ", ".join(report.launch))
    console.print(f"report: {Path(out) / 'mindport-report.html'} (and .json)")
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
@click.option("--distributed", is_flag=True,
              help="train.py trains data-parallel under msrun (each worker its shard of the data, gradients "
                   "averaged), and launch_train.sh (the msrun command) is written beside it.")
@click.option("--force", is_flag=True, help="Overwrite existing scripts.")
def scaffold(model_ref, ctor, input_specs, out_dir, api, optimizer, num_classes, checkpoint, dataset, dataset_ctor,
             distributed, force):
    """Write MindSpore train.py / eval.py for a model.

    \b
    Example:
      mindport scaffold --model converted/model.py:Net --ctor "num_classes=10" \\
          --input 2x3x32x32:float32 -o scripts/
      python scripts/train.py --steps 2     # two steps on synthetic data
      python scripts/eval.py                # accuracy, precision, recall, confusion matrix
      mindport scaffold --model converted/model.py:Net --ctor "num_classes=10" \\
          --input 2x3x32x32:float32 -o dp_scripts/ --distributed
      NPROC=2 sh dp_scripts/launch_train.sh --steps 2   # data-parallel train.py under msrun, 2 workers

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
            distributed=distributed,
        )
    except InputError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for path in paths:
        click.echo(f"wrote {path}")
    sys.exit(EXIT_OK)


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
@click.option("--root", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder a dotted (pkg.module:Name) or package (pkg/module.py:Name) reference is found under, "
                   "as validate's --root (default: here).")
@click.option("--rtol", type=float, default=1e-5, show_default=True)
@click.option("--atol", type=float, default=1e-6, show_default=True)
@click.option("--log-dir", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Keep the MindSpore process's log (MindSpore's messages and C++ stacks) in DIR "
                   "(default: a temporary folder, removed).")
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
def export(model_ref, ctor, input_specs, checkpoint, out, root, rtol, atol, log_dir, force):
    """Export a MindSpore model as MindIR, load it back and check it computes what the Cell computes.

    \b
    Example (the checkpoint from `mindport weights`):
      mindport weights net.pt -o net.ckpt --model converted/model.py:Net --ctor "num_classes=10"
      mindport export --model converted/model.py:Net --ctor "num_classes=10" --input 2x3x32x32:float32 \\
          --checkpoint net.ckpt -o net.mindir

      mindport export --model pkg.model:Net --root converted --input 2x16:int64:0:100 -o lm.mindir

    mindspore.export writes the graph for the given input shapes; mindspore.load + nn.GraphCell run it
    again on the same inputs and every output is compared with the Cell's (rtol/atol). Only a graph that
    reloads equal is written to OUT (whole or not at all); otherwise the cause is localised: the innermost
    layer whose own export differs while its sub-layers export equal, at its converted line (MP601).
    Outputs MindIR cannot hold (None in `return logits, None`) are left out of the graph and listed.
    The model is built in a MindSpore process of its own, as validate does: MindSpore's messages go to its
    log (--log-dir keeps it), nothing is written into the current folder. export imports the model's module
    and evaluates --ctor (it runs the project's code).
    Exit: 0 written and equal, 1 export failed or outputs differ (nothing written), 2 usage or input error.
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
                                   rtol=rtol, atol=atol, root=root, log_dir=log_dir)
    except InputError as exc:
        _fail_input(exc)
    from rich.markup import escape

    diagnostic = report.diagnostic(model_ref)  # MP601 at the cause's converted line
    console.print(f"[green]{escape(report.summary())}[/]" if diagnostic is None else
                  f"[red]{escape(diagnostic.format())}[/]", markup=True)
    for result in report.outputs:
        if not result.allclose:
            console.print(f"  {result.key}: {result.status} (max abs {result.max_abs}) {result.message}", markup=False)
    if report.log:
        console.print(f"MindSpore log: {report.log}", markup=False)
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


def _print_models(report, console) -> None:
    """The discovered models: the ones not proven with their reason, then the summary line."""
    from rich.markup import escape

    from mindport.discovery.prove import brief_reason, summary_line

    for m in report.models:
        if m["status"] == "proven":
            if m.get("graph_note"):  # proven, but its GRAPH_MODE needs a setting the user must make too
                console.print(f"  {escape(m['class'])}: proven; GRAPH_MODE {escape(m['graph_note'])}", markup=True)
            continue
        why = m.get("error") or m.get("reason") or ""
        fd = m.get("first_divergent")
        where = f" at {fd['layer']} ({fd['file']}:{fd['line']})" if fd and fd.get("file") else ""
        console.print(f"  {escape(m['class'])}: [bold]{m['status']}[/]{escape(where)}: {escape(brief_reason(why, 200))}",
                      markup=True)
    console.print(summary_line(report.models_summary))
