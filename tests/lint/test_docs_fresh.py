"""docs/rules/ is generated from the rule classes; this fails when someone forgets to regenerate."""
from __future__ import annotations

import subprocess
import sys

from lint_helpers import REPO, cli_env

from mindport.validators.lint import all_rules
from mindport.validators.lint.docs import DEFAULT_OUT, check, render_all


def test_docs_rules_are_fresh():
    problems = check(DEFAULT_OUT)
    assert not problems, "run `python -m mindport.validators.lint.docs`:\n" + "\n".join(problems)


def test_one_page_per_rule_with_ruff_sections():
    pages = render_all()
    assert set(pages) == {f"{r.code}.md" for r in all_rules()} | {"index.md"}
    for rule in all_rules():
        page = pages[f"{rule.code}.md"]
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix"):
            assert heading in page, (rule.code, heading)
        assert rule.INVALID[0].rstrip("\n") in page
        assert f"[{rule.code}]({rule.code}.md)" in pages["index.md"]


def test_generator_cli_write_and_check(tmp_path):
    def gen(*args):
        return subprocess.run([sys.executable, "-m", "mindport.validators.lint.docs", "--out", str(tmp_path), *args],
                              capture_output=True, text=True, env=cli_env(), cwd=REPO, timeout=120)

    assert gen("--check").returncode == 1  # empty folder: missing pages
    assert gen().returncode == 0
    assert gen("--check").returncode == 0
    page = tmp_path / "MS101.md"
    page.write_text(page.read_text() + "\nhand edit\n")
    (tmp_path / "MS999.md").write_text("orphan")
    out = gen("--check")
    assert out.returncode == 1 and "stale" in out.stdout and "MS999" in out.stdout
