"""The pre-commit hook, exercised end to end on a temporary git repository (offline).

Why `repo: local` + `language: system`: the published form (`repo: <url or path>`, `rev: <sha>`,
hook `mindport-lint` with `language: python`) makes pre-commit build a virtualenv and `pip install` the
repository, which pulls mindspore/torch from the network. Offline, a local hook with `language: system`
runs the same command (`mindport lint`, here through this interpreter) against the same staged files,
and the manifest itself (.pre-commit-hooks.yaml) is validated separately below.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml

from lint_helpers import REPO, cli_env

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is required")


def test_manifest_declares_the_hook():
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "mindport-lint"]
    assert hook["language"] == "python" and hook["entry"] == "mindport lint" and hook["types"] == ["python"]
    # pre-commit's own schema check of the manifest
    out = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)


def test_precommit_runs_the_hook(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    entry = f"{sys.executable} -m mindport.cli lint"
    (repo / ".pre-commit-config.yaml").write_text(
        "# offline: a local hook running the same command as the published `mindport-lint` hook\n"
        "repos:\n  - repo: local\n    hooks:\n      - id: mindport-lint\n        name: mindport lint\n"
        f"        entry: {entry}\n        language: system\n        types: [python]\n"
    )
    (repo / "good.py").write_text("from mindspore import nn\nact = nn.GELU(approximate=False)\n")
    (repo / "README.md").write_text("not python\n")
    _git(repo, "add", "-A")
    env = cli_env()
    env["PRE_COMMIT_HOME"] = str(tmp_path / "cache")
    env.pop("PRE_COMMIT", None)

    def run():
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo,
                              capture_output=True, text=True, env=env, timeout=300)

    ok = run()
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "mindport lint" in ok.stdout and "Passed" in ok.stdout

    (repo / "bad.py").write_text("from mindspore import nn\nact = nn.GELU()\n")
    _git(repo, "add", "-A")
    bad = run()
    assert bad.returncode == 1
    assert "bad.py:2:7: MS206" in bad.stdout and "Failed" in bad.stdout
    assert "good.py:" not in bad.stdout.replace("good.py\n", "")
