"""The two installs: `pip install mindport` (light: convert and lint, and the pre-commit hook) and
`pip install 'mindport[full]'`. The light install is checked here by running the CLI in a process where the full
install's modules cannot be imported (as in a light virtualenv); the measured install time and size are in
docs/quickstart.md."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
FULL_ONLY = ("numpy", "torch", "mindspore", "onnx", "safetensors", "matplotlib", "ml_dtypes")


def names(requirements) -> set[str]:
    return {re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_light_install_is_light_and_the_full_extra_has_the_rest():
    project = PYPROJECT["project"]
    assert names(project["dependencies"]) == {"libcst", "rich", "click", "jinja2"}
    full = names(project["optional-dependencies"]["full"])
    assert {"numpy", "torch", "mindspore", "onnx", "safetensors", "matplotlib"} <= full
    assert project["optional-dependencies"]["validate"] == ["mindport[full]"]


def test_the_licence_is_an_spdx_expression_and_builds_without_warnings(tmp_path):
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "mindport", tmp_path / "mindport", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "meta").mkdir()
    run = subprocess.run([sys.executable, "-W", "always", "-c",
                          "from setuptools import build_meta; import sys; "
                          "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))", str(tmp_path / "meta")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "licen" not in run.stderr.lower(), run.stderr[-3000:]
    metadata = (tmp_path / "meta" / run.stdout.strip().splitlines()[-1] / "METADATA").read_text()
    assert "License-Expression: Apache-2.0" in metadata


def test_the_precommit_hook_installs_the_light_part_only():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "mindport-lint"]
    assert hook["language"] == "python" and "additional_dependencies" not in hook


LIGHT = r"""
import sys
for name in %r:
    sys.modules[name] = None  # as in a light install: importing it fails
from mindport.cli import main
sys.argv = ["mindport", *sys.argv[1:]]
main()
"""


def light(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LIGHT % (FULL_ONLY,), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


MODEL = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n"


def test_convert_and_lint_run_on_the_light_install(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(MODEL)
    convert = light("convert", "src", "-o", "out", "--format", "json", cwd=tmp_path)
    assert convert.returncode == 0, convert.stderr
    assert json.loads(convert.stdout)["ok"] and "nn.Cell" in (tmp_path / "out" / "model.py").read_text()
    lint = light("lint", "out", cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    migrate = light("migrate", "src", "-o", "migrated", cwd=tmp_path)  # no model: conversion only
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    assert "nn.Cell" in (tmp_path / "migrated" / "model.py").read_text()


@pytest.mark.parametrize("args", [
    ["weights", "model.pt", "-o", "model.ckpt"],
    ["validate", "--torch", "src/model.py:Net", "--ms", "out/model.py:Net"],
    ["scaffold", "--model", "out/model.py:Net", "-o", "scripts"],
    ["export", "--model", "out/model.py:Net", "--input", "2x3:float32", "-o", "net.mindir"],
    ["migrate", "src", "-o", "migrated", "--model", "model.py:Net", "--input", "2x3:float32"],
    ["mappings", "prove", "my_maps.toml"],
], ids=lambda args: " ".join(args[:2]))
def test_commands_of_the_full_install_name_the_extra(tmp_path, args):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(MODEL)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "model.py").write_text(MODEL)
    (tmp_path / "model.pt").write_bytes(b"")
    (tmp_path / "my_maps.toml").write_text("")
    run = light(*args, cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    message = " ".join(run.stderr.split())
    assert "which this install lacks" in message and "pip install 'mindport[full]'" in message, message
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "migrated").exists()  # refused before anything is written


def test_the_runtime_extra_holds_what_the_runtime_layer_imports():
    """A migrated project lists mindport[runtime] (mindport/migrator/formats.py): that extra must install every
    package mindport.runtime imports (einops only for code that uses einops, which lists it itself)."""
    import ast

    imported = set()
    for path in (ROOT / "mindport" / "runtime").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"mindport", "einops"}
    assert third_party == names(PYPROJECT["project"]["optional-dependencies"]["runtime"]) == {"mindspore", "numpy"}
