"""Names removed from Python, NumPy and SciPy, and the current names that meant the same object (the table is
``legacy_names.toml`` beside this file; stdlib only, so the lint path and a side process's start-up stay light).

``LEGACY`` maps an old qualified name to the current one: ``"collections.Sequence" -> "collections.abc.Sequence"``,
``"numpy.float" -> "builtins.float"``, ``"scipy.signal.hann" -> "scipy.signal.windows.hann"``. The converter writes
the current name (``rules/legacy_names.py``); the reference side of a discovery build or proof puts the old one back
(``mindport.discovery.legacy_names``).
"""
from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

TABLE = Path(__file__).with_name("legacy_names.toml")


@cache
def families() -> tuple[dict, ...]:
    return tuple(tomllib.loads(TABLE.read_text(encoding="utf-8"))["family"])


@cache
def moved_modules() -> dict[str, str]:
    """Old module -> the module a library renamed it to, every name kept (the table's ``moved_module`` entries)."""
    entries = tomllib.loads(TABLE.read_text(encoding="utf-8")).get("moved_module", [])
    return {e["old"]: e["new"] for e in entries}


@cache
def legacy() -> dict[str, str]:
    """Old qualified name -> current qualified name."""
    out: dict[str, str] = {}
    for fam in families():
        pairs = [(n, n) for n in fam.get("names", ())] + list(fam.get("renamed", {}).items())
        for old, new in pairs:
            out[f"{fam['old']}.{old}"] = f"{fam['new']}.{new}"
    return out


def by_module() -> dict[str, list[tuple[str, str, str]]]:
    """Old module -> [(old name, current module, current name)], for putting the old names back."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for old, new in legacy().items():
        old_mod, _, old_name = old.rpartition(".")
        new_mod, _, new_name = new.rpartition(".")
        out.setdefault(old_mod, []).append((old_name, new_mod, new_name))
    return out
