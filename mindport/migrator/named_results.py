"""The runtime functions that return torch's named tuples, and their fields, read from the runtime's source.

In PyNative the runtime returns the named tuple (``mp_linalg.lstsq(a, b).solution``); in a compiled graph it returns
a plain tuple (``mindport.runtime._graph.named``: a named tuple built in a graph is not compiled), so a field read on
the call's result fails there (``'Tuple' object has no attribute 'solution'``, Koopa). The converter writes such a
read by position, ``mp_linalg.lstsq(a, b)[0]``, which means the same in both modes. Read without importing the
runtime (the converter runs without MindSpore): ``X = namedtuple("x", [fields])`` and functions whose every
``return`` is ``named(X, ...)``."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

from mindport.migrator.imports import runtime_alias

_RUNTIME = Path(__file__).resolve().parent.parent / "runtime"


# torch.max/min with a dim give (values, indices): the runtime returns ops.max's plain tuple in both modes, so a
# field read fails even in PyNative ('tuple' object has no attribute 'values')
_PLAIN_PAIRS = {f"{runtime_alias('mindport.runtime.tensor')}.{name}": ("values", "indices") for name in ("max", "min")}


@functools.lru_cache(maxsize=1)
def torch_named_results() -> dict[str, tuple[str, ...]]:
    """torch.return_types as data (mappings/data/surface/named_results.toml): ``"cummax"`` -> ("values",
    "indices"), ``"linalg_qr"`` -> ("Q", "R")."""
    import tomllib

    path = Path(__file__).resolve().parent.parent / "mappings" / "data" / "surface" / "named_results.toml"
    return {name: tuple(fields) for name, fields in tomllib.loads(path.read_text(encoding="utf-8"))["fields"].items()}


def torch_result_fields(torch_name: str) -> tuple[str, ...] | None:
    """The fields of the named tuple the torch function or Tensor method ``torch_name`` returns (``torch.cummax``,
    ``torch.Tensor.cummax``, ``torch.linalg.qr``), None for one that returns none."""
    parts = torch_name.split(".")
    key = "linalg_" + parts[-1] if len(parts) > 1 and parts[-2] == "linalg" else parts[-1]
    return torch_named_results().get(key)


def result_fields(function: str, arguments: int) -> tuple[str, ...] | None:
    """The fields of torch's named tuple that the runtime function ``function`` (as converted code names it),
    called with ``arguments`` arguments, stands for; None when it returns no such tuple."""
    if function in _PLAIN_PAIRS:
        return _PLAIN_PAIRS[function] if arguments >= 2 else None
    return named_fields().get(function)


@functools.lru_cache(maxsize=1)
def named_fields() -> dict[str, tuple[str, ...]]:
    """``"mp_linalg.lstsq"`` (the name converted code calls) -> the fields of the named tuple it returns."""
    found: dict[str, tuple[str, ...]] = {}
    for path in sorted(_RUNTIME.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "namedtuple(" not in text:  # parsing every runtime module costs a second on a process's first file
            continue
        tree = ast.parse(text)
        classes: dict[str, tuple[str, ...]] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "namedtuple" \
                    and len(node.value.args) == 2 and isinstance(node.value.args[1], (ast.List, ast.Tuple)):
                classes[node.targets[0].id] = tuple(e.value for e in node.value.args[1].elts)
        alias = runtime_alias(f"mindport.runtime.{path.stem}")
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                continue
            returned = {_named_class(r.value) for r in ast.walk(node) if isinstance(r, ast.Return)}
            if len(returned) == 1 and (cls := returned.pop()) in classes:
                found[f"{alias}.{node.name}"] = classes[cls]
    return found


def _named_class(value) -> str | None:
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "named" and value.args \
            and isinstance(value.args[0], ast.Name):
        return value.args[0].id
    return None
