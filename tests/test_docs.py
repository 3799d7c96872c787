"""Generated documentation must match the code: run `make docs` after changing commands or tables."""
import subprocess
import sys

from mindport.docs_gen import CLI_DOC


def test_cli_reference_is_fresh():
    # In a fresh interpreter: other tests build click contexts in this process, which changes help layout.
    run = subprocess.run([sys.executable, "-m", "mindport.docs_gen", "--check-cli"], capture_output=True, text=True)
    assert run.returncode == 0, "docs/cli.md is stale: run `make docs`\n" + run.stderr[-2000:]


def test_cli_reference_covers_every_command():
    text = CLI_DOC.read_text(encoding="utf-8")
    for command in ("convert", "weights", "validate", "migrate", "lint", "scaffold", "mappings coverage"):
        assert f"## `mindport {command}`" in text
