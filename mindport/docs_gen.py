"""Regenerate the generated docs: docs/cli.md (from the click commands), docs/mappings.md (from the tables),
docs/rules/ (from the lint rule classes) and docs/converter/ (from the converter rule classes). `make docs` runs it;
tests fail when a page is stale."""
from __future__ import annotations

from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = ROOT / "docs" / "cli.md"


def render_cli() -> str:
    from mindport.cli import main

    lines = ["# CLI reference", "", "Generated from the commands' own `--help` by `make docs`; a test fails when it is stale.", ""]

    def walk(command: click.Command, path: list[str]) -> None:
        ctx = click.Context(command, info_name=" ".join(path), terminal_width=100, max_content_width=100)
        lines.extend([f"## `{' '.join(path)}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""])
        if isinstance(command, click.Group):
            for name in sorted(command.commands):
                walk(command.commands[name], [*path, name])

    walk(main, ["mindport"])
    return "\n".join(lines)


def main() -> None:
    from mindport.mappings.coverage import DOCS_PATH, render_docs

    CLI_DOC.write_text(render_cli(), encoding="utf-8")
    DOCS_PATH.write_text(render_docs(), encoding="utf-8")
    from mindport.validators.lint import docs as lint_docs

    lint_docs.main([])
    from mindport.migrator.rules import docs as converter_docs

    converter_docs.main([])
    print(f"wrote {CLI_DOC.relative_to(ROOT)}, {DOCS_PATH.relative_to(ROOT)}, docs/rules/, docs/converter/")


if __name__ == "__main__":
    import sys

    if "--check-cli" in sys.argv:  # used by the test suite, in a fresh interpreter (click state is global)
        sys.exit(0 if CLI_DOC.read_text(encoding="utf-8") == render_cli() else 1)
    main()
