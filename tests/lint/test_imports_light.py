"""The lint path must import neither torch, nor mindspore, nor libcst (only --fix loads libcst)."""
from __future__ import annotations

import json
import subprocess
import sys

from lint_helpers import REPO, cli_env

PROBE = r"""
import json, sys
from click.testing import CliRunner
from mindport.cli import main
args = sys.argv[1:]
result = CliRunner().invoke(main, ["lint", *args])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "mindspore", "libcst"))
print(json.dumps({"exit": result.exit_code, "heavy": heavy, "output": result.output}))
"""


def _probe(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                         env=cli_env(), cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_lint_imports_no_heavy_modules(tmp_path):
    f = tmp_path / "model.py"
    f.write_text("from mindspore import nn\nclass Net(nn.Cell):\n    def __init__(self):\n"
                 "        super().__init__()\n        self.layers = [nn.Dense(2, 2)]  # noqa: MS202\n")
    data = _probe(str(f), "--output-format", "sarif")
    assert data["exit"] == 1 and "MS107" in data["output"]
    assert data["heavy"] == []


def test_fix_is_the_only_path_loading_libcst(tmp_path):
    f = tmp_path / "model.py"
    f.write_text("from mindspore import nn\nclass Net(nn.Cell):\n    def __init__(self):\n"
                 "        super().__init__()\n        self.layers = [nn.Dense(2, 2)]\n")
    data = _probe(str(f), "--fix")
    assert "libcst" in data["heavy"]
    assert not any(m.split(".")[0] in ("torch", "mindspore") for m in data["heavy"])
    assert "nn.CellList([nn.Dense(2, 2)])" in f.read_text()


def test_importtime_lists_no_heavy_modules(tmp_path):
    f = tmp_path / "ok.py"
    f.write_text("x = 1\n")
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "mindport.cli", "lint", str(f)],
                         capture_output=True, text=True, env=cli_env(), cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    imported = [line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")]
    assert "mindport.validators.lint.engine" in imported
    assert not [m for m in imported if m.split(".")[0] in ("torch", "mindspore", "libcst")]
