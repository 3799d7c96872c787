"""Shared helpers of the parity tests: convert a fixture torch model with mindport's converter, optionally re-inject a
trap; run `mindport validate`. A uniquely named module: `from conftest import ...` inside a test body found whichever
conftest.py was imported last (tests/weights/conftest.py under xdist)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODELS = Path(__file__).parent / "models"


def convert_model(name: str, out_dir: Path, edits=(), suffix: str = "ms") -> Path:
    """Convert ``models/<name>.py`` to MindSpore source in ``out_dir``; ``edits`` are (attribute, old, new):
    in the line assigning ``self.<attribute>``, ``old`` (a regex) becomes ``new``."""
    from mindport.migrator import convert_source

    code = convert_source((MODELS / f"{name}.py").read_text(), f"{name}.py").code
    lines = code.splitlines(keepends=True)
    for attr, old, new in edits:
        idx = [i for i, ln in enumerate(lines) if re.search(rf"self\.{attr}\s*=", ln)]
        assert idx, f"converted {name}.py has no self.{attr} = ... line:\n{code}"
        line = lines[idx[0]]
        assert re.search(old, line), f"{old!r} not in the converted line {line!r}"
        lines[idx[0]] = re.sub(old, new, line, count=1)
    path = out_dir / f"{name}_{suffix}.py"
    path.write_text("".join(lines))
    return path


def cli_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_cli(*args, cwd):
    import subprocess

    return subprocess.run([sys.executable, "-m", "mindport.cli", "validate", *map(str, args)], capture_output=True,
                          text=True, env=cli_env(), cwd=cwd, timeout=300)
