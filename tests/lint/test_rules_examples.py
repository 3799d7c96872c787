"""Every rule's VALID/INVALID examples are its tests (Fixit style): INVALID must fire, VALID must not."""
from __future__ import annotations

import re

import pytest

from mindport.validators.lint import REGISTRY, all_rules, lint_source
from mindport.validators.lint.rules.base import FAMILIES

RULES = all_rules()


def _cases(attr: str):
    return [pytest.param(rule, i, id=f"{rule.code}-{attr.lower()}{i}")
            for rule in RULES for i in range(len(getattr(rule, attr)))]


def _own(rule, source):
    return [f for f in lint_source(source, "example.py", [rule]) if f.code == rule.code]


@pytest.mark.parametrize("rule, index", _cases("INVALID"))
def test_invalid_example_fires(rule, index):
    source = rule.INVALID[index]
    found = _own(rule, source)
    assert found, f"{rule.code} did not fire on INVALID[{index}]:\n{source}"
    n_lines = source.count("\n") + 1
    for f in found:
        assert 1 <= f.line <= n_lines and f.col >= 1
        assert f.message and f.name == rule.name


@pytest.mark.parametrize("rule, index", _cases("VALID"))
def test_valid_example_is_clean(rule, index):
    found = _own(rule, rule.VALID[index])
    assert not found, f"{rule.code} fired on VALID[{index}]: {[x.format() for x in found]}"


@pytest.mark.parametrize("rule, index", _cases("FIXES"))
def test_fix_examples(rule, index):
    from mindport.validators.lint.fix import fix_source

    before, after = rule.FIXES[index]
    findings = lint_source(before, "example.py", [rule])
    assert any(f.fixable for f in findings)
    fixed, count = fix_source(before, findings)
    assert fixed == after
    assert count >= 1
    # idempotent: fixing the result again changes nothing
    again, count2 = fix_source(fixed, lint_source(fixed, "example.py", [rule]))
    assert again == fixed and count2 == 0


def test_registry_shape():
    # 7 migration-guide pitfalls + at least 20 more, plus MS001
    assert [r.code for r in RULES if r.code.startswith("MS1")] == [f"MS10{i}" for i in range(1, 8)]
    assert len([r for r in RULES if r.code[:3] in ("MS2", "MS3", "MS4", "MS5")]) >= 20
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names)
    for r in RULES:
        assert re.fullmatch(r"MS\d{3}", r.code) and r.code[:3] in FAMILIES
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), r.name
        assert r.severity in ("error", "warning", "info")
        assert REGISTRY[r.code] is r


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_is_documented_and_tested(rule):
    doc = rule.__doc__ or ""
    assert "## Why is this bad?" in doc and "## Fix" in doc, f"{rule.code}: docstring sections missing"
    assert len(rule.VALID) >= 2 and len(rule.INVALID) >= 2
    if rule.fixable:
        assert rule.FIXES, f"{rule.code} is fixable but has no FIXES examples"


def test_torch_names_are_not_mindspore_traps():
    source = "import torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\npool = nn.MaxPool2d(2)\nact = nn.GELU()\n"
    assert lint_source(source) == []


def test_import_styles_resolve():
    for header, name in [
        ("import mindspore as ms\n", "ms.nn.Conv2d"),
        ("import mindspore.nn as nn\n", "nn.Conv2d"),
        ("from mindspore import nn\n", "nn.Conv2d"),
        ("from mindspore.nn import Conv2d\n", "Conv2d"),
        ("from mindspore.nn import Conv2d as C\n", "C"),
        ("import mindspore\n", "mindspore.nn.Conv2d"),
    ]:
        codes = {f.code for f in lint_source(f"{header}c = {name}(3, 8, 3)\n")}
        assert {"MS201", "MS202"} <= codes, header
