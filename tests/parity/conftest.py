"""Fixtures of the parity tests (their helpers are in parity_helpers.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from parity_helpers import MODELS, REPO, cli_env, convert_model, run_cli  # noqa: F401 - for tests that still import them from conftest


@pytest.fixture(scope="session")
def converted_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("converted")
