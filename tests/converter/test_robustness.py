"""Property tests: for generated programs (hypothesmith, derandomized: every run checks the same programs) and for the
zoo fixtures, conversion never crashes, the output parses, and converting the output again changes nothing
(idempotence). Torch-style generated programs: test_idempotence.py."""
from __future__ import annotations

import ast
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from mindport import convert_source

ZOO = sorted((Path(__file__).parent.parent / "zoo" / "models").glob("*.py"))
TORCHY_PREFIX = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom torch import nn as tnn\n"


def _check(code: str) -> None:
    first = convert_source(code, "gen.py")
    ast.parse(first.code)  # the output parses
    second = convert_source(first.code, "gen.py")
    assert second.code == first.code, "converting the output again changed it"
    if any(d.code == "MP201" for d in first.diagnostics):
        assert first.code == code


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_programs_never_crash_and_are_idempotent(code):
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return  # the grammar strategy can produce code CPython rejects; libcst's MP201 path is tested below
    _check(code)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_generated_programs_with_torch_names_in_scope(code):
    # the generated code uses arbitrary names; with torch imported under common aliases some resolve to torch
    _check(TORCHY_PREFIX + code)


@pytest.mark.parametrize("path", ZOO, ids=[p.stem for p in ZOO])
def test_fixtures_convert_idempotently(path):
    code = path.read_text(encoding="utf-8")
    _check(code)


@pytest.mark.parametrize("code", [
    "def f(:\n    pass\n",
    "import torch\nx = torch.zeros(1\n",
    "class A(nn.Module)\n    pass\n",
    "x = (1, 2\n",
    "if True:\npass\n",
])
def test_syntax_errors_are_mp201_never_crashes(code):
    result = convert_source(code, "broken.py")
    assert [d.code for d in result.diagnostics] == ["MP201"]
    assert result.code == code and not result.changed
    assert result.diagnostics[0].file == "broken.py" and result.diagnostics[0].line >= 1


def test_empty_and_comment_only_files():
    for code in ("", "\n", "# only a comment\n", '"""docstring"""\n', "import torch\n"):
        result = convert_source(code)
        ast.parse(result.code)
        assert convert_source(result.code).code == result.code
