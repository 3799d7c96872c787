"""Generated documentation must match the code: run `make docs` after changing commands or tables."""
from mindport.docs_gen import CLI_DOC, render_cli


def test_cli_reference_is_fresh():
    assert CLI_DOC.read_text(encoding="utf-8") == render_cli(), "docs/cli.md is stale: run `make docs`"


def test_cli_reference_covers_every_command():
    text = CLI_DOC.read_text(encoding="utf-8")
    for command in ("convert", "weights", "validate", "migrate", "lint", "scaffold", "mappings coverage"):
        assert f"## `mindport {command}`" in text
