"""Emit MindSpore training and evaluation scripts for a (converted) model.

``render_scripts`` writes three files rendered from the jinja2 templates next to this module:
``train.py`` (functional value_and_grad step or the Model API), ``eval.py`` (metrics, inference mode) and
``data_pipeline.py`` (GeneratorDataset over arrays, synthetic data or the user's dataset class).
Rendering is cheap: nothing here imports mindspore; the model file is only parsed to check the name.
"""
from __future__ import annotations

import ast
import keyword
import os
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import jinja2

from mindport import __version__
from mindport.errors import InputError

from mindport.templates.inputs import parse_input_specs

TEMPLATE_DIR = Path(__file__).parent
# Output file -> template. data_pipeline.py is imported by the two scripts.
SCRIPTS = {"train.py": "train.py.j2", "eval.py": "eval.py.j2", "data_pipeline.py": "data_pipeline.py.j2"}
OPTIMIZERS = ("adamw", "adam", "sgd")
APIS = ("functional", "model")


class ScaffoldExistsError(InputError):
    """The output files exist and overwrite was not requested."""


@dataclass(frozen=True)
class SymbolRef:
    """How a generated script imports `name` from a user file (rendered by _model_import.j2)."""

    kind: str  # "module": from <module> import name | "syspath": sys.path entry then import | "importlib"
    name: str
    module: str
    directory: str = ""  # Python expression, for kind == "syspath"
    path: str = ""  # Python expression, for kind == "importlib"


def split_ref(ref: str) -> tuple[str, str]:
    """``"pkg/model.py:Net"`` -> ("pkg/model.py", "Net")."""
    file_part, sep, name = ref.rpartition(":")
    if not sep or not file_part or not name.isidentifier():
        raise InputError(f"expected FILE.py:Name, got {ref!r} (e.g. converted/model.py:Net)")
    return file_part, name


def top_level_names(path: Path) -> set[str]:
    """Classes, functions and assigned/imported names defined at the top level of a Python file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot parse {path}: {exc}") from None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _check_symbol(path: Path, name: str, what: str) -> None:
    if not path.is_file():
        raise InputError(f"{what.split()[0]} file not found: {path}")
    names = top_level_names(path)
    if name not in names:
        candidates = sorted(n for n in names if n[:1].isupper()) or sorted(names)
        hint = f"; top-level names there: {', '.join(candidates[:12])}" if candidates else ""
        raise InputError(f"{what} {name!r} not found in {path}{hint}")


def _check_call_args(text: str, what: str) -> None:
    try:
        ast.parse(f"f({text})", mode="eval")
    except SyntaxError:
        raise InputError(f"{what} is not a valid Python argument list: {text!r} (e.g. num_classes=10)") from None


def _path_expr(target: Path, out_dir: Path) -> str:
    """Python source for `target` as seen from the generated scripts: relative to their own folder (``HERE``), so
    that the project still runs when it is moved or copied whole; absolute only where no relative path exists
    (another drive)."""
    try:
        rel = Path(os.path.relpath(target, out_dir.resolve()))
    except ValueError:
        return repr(str(target))
    parts = ["os.pardir" if p == ".." else repr(p) for p in rel.parts if p != "."]
    if not parts:
        return "HERE"
    joined = f"os.path.join(HERE, {', '.join(parts)})"
    return f"os.path.normpath({joined})" if "os.pardir" in parts else joined


def _symbol_ref(path: Path, name: str, out_dir: Path) -> SymbolRef:
    generated = {Path(s).stem for s in SCRIPTS}
    stem = path.stem
    importable = stem.isidentifier() and not keyword.iskeyword(stem) and stem not in generated
    try:
        parts = path.with_suffix("").relative_to(out_dir).parts
    except ValueError:
        parts = ()
    if parts and importable and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return SymbolRef("module", name, ".".join(parts))
    if not parts and importable:
        return SymbolRef("syspath", name, stem, directory=_path_expr(path.parent, out_dir))
    module = "_user_" + re.sub(r"\W", "_", stem)
    return SymbolRef("importlib", name, module, path=_path_expr(path, out_dir))


def _resolve(out_dir: Path, file: str | os.PathLike) -> Path:
    path = Path(file)
    return (path if path.is_absolute() else out_dir / path).resolve()


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # Python source, not HTML
    )
    env.filters["pyrepr"] = repr
    return env


def _mindspore_series() -> str:
    try:
        return ".".join(metadata.version("mindspore").split(".")[:2])
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "2.x"


def render_scripts(
    out_dir: str | os.PathLike,
    model_file: str | os.PathLike,
    class_name: str,
    ctor: str = "",
    input_spec: str | list[str] = "2x3x32x32:float32",
    num_classes: int | None = None,
    optimizer: str = "adamw",
    lr: float = 1e-3,
    api: str = "functional",
    checkpoint: str | os.PathLike | None = None,
    dataset: str | None = None,
    dataset_ctor: str = "",
    overwrite: bool = False,
    distributed: bool = False,
) -> list[Path]:
    """Write train.py, eval.py and data_pipeline.py into `out_dir`; return their paths.

    model_file: the MindSpore model .py, relative to out_dir or absolute; class_name: a class or factory
    function in it, called as ``class_name(ctor)`` (ctor is Python source such as "num_classes=10").
    input_spec: one spec per model input (``2x3x32x32:float32``; the first dimension is the default batch size).
    num_classes: None reads it from the model output at run time. api: the default of train.py --api.
    checkpoint: a MindSpore .ckpt the scripts start from. dataset: optional ``FILE.py:Class`` whose
    instances (built with ``dataset_ctor``, which may use the name ``split``) return numpy
    ``(inputs..., label)`` samples. distributed: train.py trains data-parallel under msrun (each worker its shard
    of the data, gradients averaged), and ``launch_train.sh`` (the msrun command) is written beside it. Raises InputError (exit code 2 in the CLI) on bad input and
    ScaffoldExistsError when a file exists and overwrite is False.
    """
    out = Path(out_dir).resolve()
    if optimizer not in OPTIMIZERS:
        raise InputError(f"unknown optimizer {optimizer!r}: choose one of {', '.join(OPTIMIZERS)}")
    if api not in APIS:
        raise InputError(f"unknown api {api!r}: choose one of {', '.join(APIS)}")
    if num_classes is not None and num_classes < 2:
        raise InputError(f"num_classes must be at least 2, got {num_classes}")
    specs = parse_input_specs(input_spec)
    _check_call_args(ctor, "constructor arguments")
    _check_call_args(dataset_ctor, "dataset constructor arguments")

    model_path = _resolve(out, model_file)
    _check_symbol(model_path, class_name, "model class/function")
    dataset_ref = None
    if dataset:
        dataset_file, dataset_class = split_ref(dataset)
        dataset_path = _resolve(out, dataset_file)
        _check_symbol(dataset_path, dataset_class, "dataset class")
        dataset_ref = _symbol_ref(dataset_path, dataset_class, out)
    checkpoint_expr = "None"
    if checkpoint is not None:
        checkpoint_path = _resolve(out, checkpoint)
        if not checkpoint_path.is_file():
            raise InputError(f"checkpoint not found: {checkpoint_path}")
        checkpoint_expr = _path_expr(checkpoint_path, out)

    targets = [out / name for name in SCRIPTS]
    existing = [p for p in targets + ([out / "launch_train.sh"] if distributed else []) if p.exists()]
    if existing and not overwrite:
        raise ScaffoldExistsError(
            "refusing to overwrite " + ", ".join(str(p) for p in existing) + " (pass overwrite=True / --force)"
        )

    names = ["x"] if len(specs) == 1 else [f"x{i}" for i in range(len(specs))]
    first = specs[0]
    context = {
        "version": __version__,
        "ms_series": _mindspore_series(),
        "model_ref": f"{os.path.relpath(model_path, out)}:{class_name}",
        "model_ref_info": _symbol_ref(model_path, class_name, out),
        "class_name": class_name,
        "ctor": ctor.strip(),
        "inputs": [
            {"name": n, "sample_shape": s.sample_shape, "dtype": s.dtype, "value_range": s.value_range}
            for n, s in zip(names, specs)
        ],
        "input_names": names,
        "multi_input": len(specs) > 1,
        "batch_size": first.batch_size,
        # Image-like first input (C, H, W floats): the training pipeline gets a numpy random flip.
        "augment_column": names[0] if first.is_float and len(first.sample_shape) == 3 else None,
        "num_classes": num_classes,
        "optimizer": optimizer,
        "model_api_owns_amp": optimizer != "adamw",
        "lr": float(lr),
        "api": api,
        "checkpoint_expr": checkpoint_expr,
        "ckpt_prefix": re.sub(r"\W", "_", class_name).lower(),
        "dataset_ref": dataset_ref,
        "dataset_ctor": dataset_ctor.strip(),
        "has_dataset": dataset_ref is not None,
        "column_names": [*names, "label"],
        "distributed": distributed,
    }
    env = _environment()
    out.mkdir(parents=True, exist_ok=True)
    for target, template in zip(targets, SCRIPTS.values()):
        target.write_text(env.get_template(template).render(**context), encoding="utf-8")
    if distributed:
        from mindport.migrator.launch import write_launch_script

        targets.append(write_launch_script(out, "train.py", ".", "train.py was written by mindport scaffold "
                                           "--distributed", torchrun=False))
    return targets
