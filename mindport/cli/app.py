"""The `mindport` command group and what its commands share: exit codes, the console, progress, the full-install
check, the conversion summary, shared options."""
from __future__ import annotations

import sys

import click

from mindport import __version__

# Exit codes shared by every command: CI can trust them.
EXIT_OK = 0          # everything converted / parity holds / no findings
EXIT_FINDINGS = 1    # something did not convert, parity failed, findings
EXIT_USAGE = 2       # usage or input error
# 3: validate's "inconclusive" verdict (ParityReport.exit_code, decided in validators/parity/verdict.py)
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT), as shells report it; nothing is left half-written


EXIT_TERMINATED = 143  # SIGTERM (``kill PID``, a CI job's time limit), as shells report it


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, so it unwinds as Ctrl-C does: files whole or not at all, side and
    builder processes closed on the way out."""


def _terminate(signum, frame):
    raise _Terminated()


class _Main(click.Group):
    """The command group: Ctrl-C ends any command with exit code 130 and one line, never click's "Aborted!" with
    exit code 1 (the code for "something did not convert"); SIGTERM the same way, with 143."""

    def invoke(self, ctx):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _terminate)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            click.echo("\ninterrupted: every file is written whole or not at all; run the command again to finish",
                       err=True)
            raise click.exceptions.Exit(EXIT_TERMINATED if isinstance(exc, _Terminated) else EXIT_INTERRUPTED) \
                from None


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
    3 inconclusive (validate: a constant output that could not be re-checked), 130 interrupted (Ctrl-C),
    143 terminated (SIGTERM).
    """
    from mindport.cpu_kernels import cap_this_process

    cap_this_process()  # MindSpore's CPU convolutions on AVX-512 machines: the fast oneDNN path (cpu_kernels.py)


def _console(stderr: bool = False):
    """Rich output: on a terminal, its width; anywhere else (CI logs, files, pipes) wide enough that no table
    column is ever cut ("rtol/at…")."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if _isatty(stream) else 1000
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=width, emoji=False)


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

    def models(self, done: int, total: int, entry: dict) -> None:
        """``migrate`` without a model: one model proven (or not) of ``total``."""
        if self._bar is None:
            return
        if getattr(self, "_models_task", None) is None:
            if self._task is not None:
                self._bar.remove_task(self._task)
                self._task = None
            self._models_task = self._bar.add_task("proving models", total=total, item="")
        self._bar.update(self._models_task, completed=done, total=total, item=f"{entry['class']} {entry['status']}")

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
    from mindport.validators.parity.report import wrapping_table

    totals = report.totals()
    table = wrapping_table(title="conversion", show_lines=False)
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


def _training_options(fn):
    """--grad and --train-steps with their settings (validate and migrate share them)."""
    options = [
        click.option("--grad", is_flag=True, help="Also compare the gradients of a seeded loss, parameter by "
                                                  "parameter, through the weight map."),
        click.option("--train-steps", type=int, default=None, metavar="N",
                     help="Also train both sides N steps from the same weights on the same seeded batches "
                          "(dropout layers off) and compare the losses and the final weights; beyond the tolerance, a "
                          "float64 torch control tells float32 noise from divergence."),
        click.option("--optimizer", type=click.Choice(["sgd", "adam", "adamw"]), default=None,
                     help="Optimizer for --train-steps (default sgd); MindSpore's comes from the mapping tables."),
        click.option("--lr", type=float, default=None, help="Learning rate for --train-steps (default 0.01)."),
        click.option("--loss", type=click.Choice(["mse", "cross_entropy"]), default=None,
                     help="Loss for --train-steps (default mse, against seeded targets of the outputs' shapes)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn
