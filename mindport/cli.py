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


# --- commands end ---


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
