"""msprobe interop: the mapping files msprobe's cross-framework compare (MindSpore vs PyTorch) needs, written from
mindport's mapping tables and a converted model.

msprobe (MindStudio Probe) compares dumps of a MindSpore run with dumps of the PyTorch run. It pairs APIs and layers
by name, and names differ across frameworks: its docs (11.accuracy_compare_MindSpore.md, section 4) ask the user to
write the pairs by hand in YAML. ``mindport mappings export-msprobe -o DIR [--model FILE.py:Name]`` writes them:

* ``api_mapping.yaml`` (``-am``): a list of ``{ms_api, pt_api, ms_args, pt_args, ms_outputs, pt_outputs}``, one per
  function/method entry of the tables whose MindSpore target msprobe dumps (``mindspore.ops`` -> ``Functional``,
  ``mindspore.mint`` -> ``Mint``, ``mindspore.mint.nn.functional`` -> ``MintFunctional``, Tensor methods ->
  ``Tensor``; torch's ``torch`` -> ``Torch``, ``torch.nn.functional`` -> ``Functional``, ``torch.Tensor`` ->
  ``Tensor``). The argument indices pair the arguments the converter passes positionally (the entry's
  ``positional``) with their places in torch's signature; for methods index 0 is the tensor itself.
* with ``--model`` (the converted MindSpore model, built in a MindSpore process of its own):
  ``cell_mapping.yaml`` (``-cm``): ``{cell path}.{MindSpore class}: {module path}.{torch class}`` for every cell whose
  class name differs from torch's (``fc.Dense: fc.Linear``); ``data_mapping.yaml`` (``-dm``): every cell's first
  forward/backward call's input and output, and every parameter gradient with the weight map's leaf names
  (``Cell.bn.BatchNorm2d.parameters_grad.gamma: Module.bn.BatchNorm2d.parameters_grad.weight``);
  ``layer_mapping.yaml`` (``-lm``): attribute names that differ between the two models' layer classes -- none, since
  the converter keeps every attribute name (written as ``{}`` so that ``-lm`` can be passed as is).

Paths are relative to the model given to msprobe's ``PrecisionDebugger`` (the model itself, as here).
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from mindport import __version__

_MS_PREFIXES = (  # longest first
    ("mindspore.mint.nn.functional.", "MintFunctional."),
    ("mindspore.mint.", "Mint."),
    ("mindspore.ops.", "Functional."),
    ("mindspore.Tensor.", "Tensor."),
)


def _pt_name(torch_name: str) -> str | None:
    for prefix, kind in (("torch.nn.functional.", "Functional."), ("torch.Tensor.", "Tensor."), ("torch.", "Torch.")):
        if torch_name.startswith(prefix):
            rest = torch_name[len(prefix):]
            return kind + rest if rest.isidentifier() else None  # torch.linalg.x etc.: not a dumped API name
    return None


def _ms_name(target: str) -> str | None:
    if target.startswith("."):
        return "Tensor." + target[1:] if target[1:].isidentifier() else None
    for prefix, kind in _MS_PREFIXES:
        if target.startswith(prefix):
            rest = target[len(prefix):]
            return kind + rest if rest.isidentifier() else None
    return None


def api_mapping(profile: str = "nn") -> list[dict]:
    """msprobe's ``api_mapping`` entries for every function and method entry with a dumpable target."""
    from mindport.mappings import load_registry

    out, seen = [], set()
    for entry in sorted({id(e): e for e in load_registry()}.values(), key=lambda e: e.torch):
        if entry.kind not in ("function", "method") or not entry.supported:
            continue
        target = entry.target(profile)
        pt, ms = _pt_name(entry.torch), _ms_name(target or "")
        if pt is None or ms is None or (ms, pt) in seen:
            continue
        torch_params = [p.name for p in entry.signature or () if p.kind == "positional"]
        to_torch = {v: k for k, v in entry.rename.items()}
        offset = 1 if entry.kind == "method" else 0
        ms_args, pt_args = list(range(offset)), list(range(offset))
        for i, ms_arg in enumerate(entry.positional):
            torch_arg = to_torch.get(ms_arg, ms_arg)
            if torch_arg in torch_params:
                ms_args.append(i + offset)
                pt_args.append(torch_params.index(torch_arg) + offset)
        if not ms_args:
            continue  # everything passed by keyword: nothing to pair by position
        seen.add((ms, pt))
        out.append({"ms_api": ms, "pt_api": pt, "ms_args": ms_args, "pt_args": pt_args, "ms_outputs": [0],
                    "pt_outputs": [0]})
    return out


def model_mappings(cells: list[dict]) -> tuple[dict, dict, dict]:
    """cell_mapping, data_mapping and layer_mapping for a model (``MindSporeSide.describe()``)."""
    cell_map, data_map = {}, {}
    for cell in cells:
        path = cell["path"]
        if not path:
            continue  # the model itself: msprobe names it after the variable given to PrecisionDebugger
        ms_cell, pt_module = f"{path}.{cell['ms_class']}", f"{path}.{cell['torch_class']}"
        if cell["ms_class"] != cell["torch_class"]:
            cell_map[ms_cell] = pt_module
        for direction in ("forward", "backward"):
            for io in ("input", "output"):
                data_map[f"Cell.{ms_cell}.{direction}.0.{io}.0"] = f"Module.{pt_module}.{direction}.0.{io}.0"
        for param in cell["params"]:
            data_map[f"Cell.{ms_cell}.parameters_grad.{param['ms']}"] = \
                f"Module.{pt_module}.parameters_grad.{param['torch']}"
    return cell_map, data_map, {}


# ----------------------------------------------------------------------------------------------------------------
# YAML, written by hand (no yaml dependency): double-quoted scalars are JSON strings, which YAML reads as such

def _scalar(value) -> str:
    return json.dumps(value) if isinstance(value, str) else str(value)


def _yaml_mapping(data: dict) -> str:
    if not data:
        return "{}\n"
    return "".join(f"{_scalar(k)}: {_scalar(v)}\n" for k, v in data.items())


def _yaml_records(records: list[dict]) -> str:
    if not records:
        return "[]\n"
    lines = []
    for record in records:
        first = True
        for key, value in record.items():
            lead = "- " if first else "  "
            first = False
            if isinstance(value, list):
                if not value:
                    lines.append(f"{lead}{key}: []")
                    continue
                lines.append(f"{lead}{key}:")
                lines.extend(f"  - {_scalar(v)}" for v in value)
            else:
                lines.append(f"{lead}{key}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


def _header(what: str, flag: str) -> str:
    return (f"# {what}\n# written by mindport {__version__} (mindport mappings export-msprobe); "
            f"pass to msprobe compare as {flag} FILE\n")


def export_msprobe(out_dir, model: str | None = None, ctor: str = "", root=None, profile: str = "nn") -> dict:
    """Write the mapping files into ``out_dir``; returns ``{file name: number of entries}``."""
    from mindport.errors import InputError

    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"-o {out_dir}: not a folder")
    cells = _describe(model, ctor, root) if model else None
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    apis = api_mapping(profile)
    (out_dir / "api_mapping.yaml").write_text(
        _header("PyTorch <-> MindSpore API pairs from mindport's mapping tables", "-am") + _yaml_records(apis),
        encoding="utf-8")
    written["api_mapping.yaml"] = len(apis)
    if cells is not None:
        cell_map, data_map, layer_map = model_mappings(cells)
        files = (("cell_mapping.yaml", cell_map, f"cells of {model} whose class differs from torch's", "-cm"),
                 ("data_mapping.yaml", data_map, f"inputs, outputs and parameter gradients of {model}", "-dm"),
                 ("layer_mapping.yaml", layer_map,
                  "layer attributes named differently in the two models: none (the converter keeps every name)", "-lm"))
        for name, data, what, flag in files:
            (out_dir / name).write_text(_header(what, flag) + _yaml_mapping(data), encoding="utf-8")
            written[name] = len(data)
    return written


def _describe(model: str, ctor: str, root) -> list[dict]:
    """Build the converted model in a MindSpore process of its own and list its cells."""
    from mindport.validators.parity.compare import _absolute_ref
    from mindport.validators.parity.sides import _checked
    from mindport.validators.parity.worker import RemoteSide

    root = str(Path(root or ".").resolve())  # the side runs elsewhere: every path it gets is absolute
    model = _absolute_ref(model, root)
    workdir = Path(tempfile.mkdtemp(prefix="mindport-msprobe-"))
    side = RemoteSide("mindspore", workdir, "MindSpore")
    try:
        _checked(side.call, "hello")
        _checked(side.call, "build", model, ctor, 0, root)
        cells = _checked(side.call, "describe")
    finally:
        side.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return cells
