"""Import folders a repository's shell scripts put on ``PYTHONPATH``.

Some repositories import across folders by flat names that only their shell scripts make resolvable:
kaituoxu/Speech-Transformer's ``src/transformer/encoder.py`` does ``from utils import get_non_pad_mask``, which is
``src/utils/utils.py`` because ``egs/aishell/path.sh`` exports
``PYTHONPATH=$SRC_ROOT/data/:$SRC_ROOT/transformer/:$SRC_ROOT/solver/:$SRC_ROOT/utils/:$PYTHONPATH`` (with
``MAIN_ROOT=$PWD/../..`` and ``SRC_ROOT=$MAIN_ROOT/src``). Without them the builder's stub finder gave ``utils`` a
stand-in and the model failed at its first call ("'_StubModule' object is not callable").

:func:`script_paths` reads the ``export PYTHONPATH=...`` (and ``PYTHONPATH=...``) lines of the repository's ``*.sh``
files, expanding the variables the same script assigns before them (``$PWD`` and ``$(pwd)`` are the script's folder,
as when the script is run from there, as such recipes are), and keeps the folders that exist inside the repository.
They go last on ``sys.path`` (after the repository's root and the model's own folders): they resolve only a name
nothing else resolves, as on the user's ``PYTHONPATH``. Both sides of a proof use them, each in its own tree (the
converted tree keeps the layout)."""
from __future__ import annotations

import os
import re
from pathlib import Path

_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$\(pwd\)")
_SKIP = {".git", "node_modules", "__pycache__", ".venv", "venv"}


def script_paths(root, limit: int = 200, max_bytes: int = 64_000) -> list[str]:
    """Folders (relative to ``root``, POSIX form, in the order the scripts give them, each once) that the
    repository's shell scripts export on ``PYTHONPATH``."""
    root = Path(root).resolve()
    out: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(".sh"):
                continue
            seen += 1
            if seen > limit:
                return out
            path = Path(folder) / name
            try:
                if path.stat().st_size > max_bytes:
                    continue
                text = path.read_text(errors="replace")
            except OSError:
                continue
            for rel in _exported(text, Path(folder), root):
                if rel not in out:
                    out.append(rel)
    return out


def _exported(text: str, here: Path, root: Path) -> list[str]:
    env = {"PWD": str(here)}
    found: list[str] = []
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip().rstrip(";")
        match = _ASSIGN.match(line)
        if match is None:
            continue
        name, value = match.group(1), match.group(2).strip().strip("'\"")
        expanded = _expand(value, env)
        if name != "PYTHONPATH":
            if expanded is not None and "$" not in expanded:
                env[name] = expanded
            continue
        for part in value.strip().strip("'\"").split(":"):
            part = _expand(part, env)
            if not part or "$" in part:
                continue  # $PYTHONPATH itself, or a variable the script did not set
            folder = Path(part) if os.path.isabs(part) else here / part
            folder = Path(os.path.normpath(folder))
            if folder.is_dir() and (folder == root or root in folder.parents):
                found.append(folder.relative_to(root).as_posix())
    return found


def _expand(value: str, env: dict) -> str | None:
    missing = False

    def sub(m):
        nonlocal missing
        if m.group(0) == "$(pwd)":
            return env["PWD"]
        key = m.group(1) or m.group(2)
        if key not in env:
            missing = True
            return m.group(0)
        return env[key]

    out = _VAR.sub(sub, value)
    return out if not missing or "$" in out else None
