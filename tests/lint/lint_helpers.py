"""Shared helpers for the lint tests: run the CLI in a subprocess, the way users and CI do."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli_env() -> dict:
    env = dict(os.environ)
    # the repo is installed editable; PYTHONPATH also makes a fresh, not-yet-installed checkout work
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture
def run_lint():
    def run(*args: str, cwd: Path | str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "mindport.cli", "lint", *map(str, args)],
            capture_output=True, text=True, cwd=cwd or REPO, env=cli_env(), timeout=120,
        )

    return run
