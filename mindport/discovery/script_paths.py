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


def import_roots(root, files: list[str] | None = None) -> list[str]:
    """The folders to put last on ``sys.path`` for the repository at ``root``: those its shell scripts export
    (:func:`script_paths`), then those its own absolute imports need.

    A repository whose scripts live in a sub-folder (yusanshi/news-recommendation's ``src/train.py``, run as
    ``python src/train.py``: Python puts ``src/`` first on ``sys.path``) imports its packages by their name from
    there (``from model.general.attention.additive import AdditiveAttention`` is ``src/model/general/...``). From
    the repository's root nothing resolves ``model``: the stub finder gave it a stand-in and 13 of 15 models were not
    built ("expected Tensor as element 0 in argument 0, but got result"). For each absolute import whose top-level
    name the root does not hold (no ``NAME.py`` nor ``NAME/`` there) and that is no installed or standard module,
    the folder that holds the whole dotted path (``F/model/general/attention/additive.py``) is taken, when exactly
    one folder of the repository does."""
    import ast

    root = Path(root).resolve()
    out = list(script_paths(root))
    if files is None:
        files = []
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
            files += [str(Path(folder, n).relative_to(root)) for n in sorted(names) if n.endswith(".py")]
            if len(files) > 3000:
                break
    wanted: dict[str, set[str]] = {}  # top-level name -> dotted paths imported under it
    for rel in files:
        try:
            tree = ast.parse((root / rel).read_text(errors="replace"))
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            names = [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                top = name.split(".")[0]
                if not (root / f"{top}.py").is_file() and not (root / top).is_dir():
                    wanted.setdefault(top, set()).add(name)
    dirs_by_name: dict[str, list[Path]] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        for d in dirs:
            dirs_by_name.setdefault(d, []).append(Path(folder))
        for n in names:
            if n.endswith(".py"):
                dirs_by_name.setdefault(n[:-3], []).append(Path(folder))
    from mindport.discovery.scan import _external_module

    for top in sorted(wanted):
        holders = {p for p in dirs_by_name.get(top, []) if p != root}
        if not holders or _external_module(top):
            continue
        dotted = max(wanted[top], key=lambda d: d.count("."))
        parts = dotted.split(".")
        fits = [p for p in holders if (p.joinpath(*parts).is_dir() or p.joinpath(*parts[:-1], parts[-1] + ".py")
                                       .is_file() or p.joinpath(*parts[:-1]).is_dir() and len(parts) > 1)]
        if len(fits) == 1:
            rel = fits[0].relative_to(root).as_posix()
            if rel not in out:
                out.append(rel)
    return out
