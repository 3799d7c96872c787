"""Every converter rule carries examples (``EXAMPLES``); each runs here through the whole converter, and each
example that changes code must need its rule: without it, the converter's output differs."""
from __future__ import annotations

import libcst as cst
import pytest

from mindport.mappings import load_registry
from mindport.migrator import convert_source, installed_ms_version
from mindport.migrator.context import Options
from mindport.migrator.engine import run_pipeline
from mindport.migrator.rules import RULES
from mindport.migrator.rules.docs import DEFAULT_OUT, check

CASES = [pytest.param(rule, example, id=f"{rule.__name__}-{number}")
         for rule in RULES for number, example in enumerate(rule.EXAMPLES, 1)]


def test_every_rule_has_an_example_that_changes_code():
    assert [rule.__name__ for rule in RULES if not any(e.after is not None for e in rule.EXAMPLES)] == []


@pytest.mark.parametrize("rule, example", CASES)
def test_example(rule, example):
    result = convert_source(example.before)
    assert result.code == example.expected
    compile(result.code, "<converted>", "exec")  # converted code parses as Python


@pytest.mark.parametrize("rule, example", [c for c in CASES if c.values[1].after is not None])
def test_example_needs_its_rule(rule, example):
    options = Options(ms_version=installed_ms_version())
    without, _ = run_pipeline(cst.parse_module(example.before), "<example>", load_registry(), options, without=(rule,))
    assert without != example.after, f"{rule.__name__}'s example converts the same without it"


def test_docs_converter_pages_are_fresh():
    problems = check(DEFAULT_OUT)
    assert not problems, "run `python -m mindport.migrator.rules.docs`:\n" + "\n".join(problems)
