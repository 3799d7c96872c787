"""Loading what the user names on the command line: ``file.py:Name`` + ``--ctor`` source, and ``--input`` specs.

``Name`` is a class or a factory function; ``--ctor`` is the call's argument list as Python source, evaluated in
the model module's own namespace (so ``--ctor "BasicBlock, [2, 2, 2, 2]"`` builds both the torch and the
MindSpore model from the same text). Input specs: ``2x3x32x32:float32`` (seeded normal floats),
``2x16:int64:0:1000`` (integers in [0, 1000)), or a ``.npy``/``.npz`` file.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mindport.errors import InputError

_DTYPES = {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool"}


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[int, ...]
    dtype: str
    low: float | None = None
    high: float | None = None
    path: str | None = None

    def __str__(self) -> str:
        if self.path:
            return self.path
        text = "x".join(map(str, self.shape)) + ":" + self.dtype
        if self.low is not None:
            text += f":{self.low:g}:{self.high:g}"
        return text


def parse_input_spec(text: str) -> InputSpec:
    text = text.strip()
    if text.endswith((".npy", ".npz")):
        if not Path(text).is_file():
            raise InputError(f"input file {text} does not exist")
        return InputSpec((), "", path=text)
    parts = text.split(":")
    if len(parts) not in (2, 4) or not re.fullmatch(r"\d+(x\d+)*", parts[0]) or parts[1] not in _DTYPES:
        raise InputError(
            f"--input {text!r}: expected SHAPE:DTYPE (e.g. 2x3x32x32:float32) or SHAPE:DTYPE:LO:HI "
            f"(e.g. 2x16:int64:0:1000) or a .npy/.npz file; dtypes: {', '.join(sorted(_DTYPES))}")
    shape = tuple(int(v) for v in parts[0].split("x"))
    if len(parts) == 4:
        try:
            low, high = float(parts[2]), float(parts[3])
        except ValueError:
            raise InputError(f"--input {text!r}: LO and HI must be numbers") from None
        if high <= low:
            raise InputError(f"--input {text!r}: HI must be greater than LO")
        return InputSpec(shape, parts[1], low, high)
    return InputSpec(shape, parts[1])


def make_inputs(specs: list[InputSpec], seed: int = 0) -> list[np.ndarray]:
    """Deterministic numpy arrays for the specs (the same arrays feed torch and MindSpore)."""
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    for spec in specs:
        if spec.path:
            data = np.load(spec.path, allow_pickle=False)
            arrays.extend(data[k] for k in data.files) if hasattr(data, "files") else arrays.append(data)
            continue
        if spec.dtype == "bool":
            arrays.append(rng.random(spec.shape) < 0.5)
        elif spec.dtype.startswith(("int", "uint")):
            low = int(spec.low) if spec.low is not None else 0
            high = int(spec.high) if spec.high is not None else 10
            arrays.append(rng.integers(low, high, size=spec.shape).astype(spec.dtype))
        else:
            low, high = spec.low, spec.high
            values = rng.uniform(low, high, size=spec.shape) if low is not None else rng.standard_normal(spec.shape)
            dtype = "float32" if spec.dtype == "bfloat16" else spec.dtype
            arrays.append(values.astype(dtype))
    return arrays


def parse_model_ref(text: str) -> tuple[Path, str]:
    """``path/model.py:Name`` -> (path, Name)."""
    path, sep, name = text.rpartition(":")
    if not sep or not path.endswith(".py") or not name.isidentifier():
        raise InputError(f"model reference {text!r}: expected FILE.py:Name (a class or a factory function)")
    if not Path(path).is_file():
        raise InputError(f"model file {path} does not exist")
    return Path(path), name


def import_file(path: Path):
    """Import a user's module from its path, with its folder on sys.path (so its sibling imports work)."""
    path = Path(path).resolve()
    name = f"_mindport_user_{path.stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    sys.path.insert(0, folder)
    # A converted project may reuse its module names (model.py on both sides): import each side fresh.
    # (string comparison: building a Path for each of the ~5000 loaded modules cost 0.1-0.2 s)
    stale = {k: v for k, v in list(sys.modules.items())
             if isinstance(getattr(v, "__file__", None), str) and os.path.dirname(v.__file__) == folder}
    try:
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except Exception as exc:
        raise InputError(f"importing {path} failed: {type(exc).__name__}: {exc}\n{_short_tb()}") from exc
    finally:
        sys.path.remove(folder)
        for key in stale:
            sys.modules.pop(key, None)
    return module


def build_model(ref: str, ctor: str = ""):
    """Import ``FILE.py:Name`` and call ``Name(<ctor>)`` in the module's own namespace."""
    path, name = parse_model_ref(ref)
    module = import_file(path)
    if not hasattr(module, name):
        available = sorted(n for n, v in vars(module).items() if isinstance(v, type) or callable(v))
        raise InputError(f"{path} has no {name!r}; it defines: {', '.join(a for a in available if not a.startswith('_'))}")
    try:
        return eval(f"{name}({ctor})", vars(module))  # noqa: S307 - the user's own constructor text, by design
    except Exception as exc:
        raise InputError(f"building {name}({ctor}) from {path} failed: {type(exc).__name__}: {exc}") from exc


def _short_tb() -> str:
    return "".join(traceback.format_exc(limit=-3).splitlines(keepends=True)[-6:])
