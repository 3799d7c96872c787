"""Idempotence on generated programs: converting converted code changes nothing, and a file with nothing to convert
comes out byte for byte (also through convert_path: copied, status "unchanged").

The programs come from tests/converter/torch_programs.py (torch-style models, forward chains, helpers, training
steps; and Python without torch). Hypothesis draws them from a seeded, derandomized source with a bounded number of
examples, so the suite stays fast and every run checks the same programs; benchmarks/idempotence_sweep.py runs
2,000+ of them. The programs that once changed on a second pass are regression tests here (ONCE_BUGS).
"""
from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindport import convert_source
from mindport.migrator.repo import convert_path

from torch_programs import LIBCST_FOOTER_BUG, plain_program, torch_program

SETTINGS = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def assert_idempotent(code: str) -> None:
    ast.parse(code)
    first = convert_source(code, "gen.py")
    ast.parse(first.code)
    second = convert_source(first.code, "gen.py")
    assert second.code == first.code, f"the second pass changed the output of:\n{code}"


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_converting_converted_code_changes_nothing(rng):
    assert_idempotent(torch_program(rng, frozenset()))


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_code_without_torch_comes_back_byte_for_byte(rng):
    code = plain_program(rng, spaces_in_footer=False)
    result = convert_source(code, "plain.py")
    assert result.code == code and not result.changed and not result.diagnostics


def test_files_with_nothing_to_convert_are_copied_byte_for_byte(tmp_path):
    import random

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for i in range(30):
        (src / f"plain{i:02d}.py").write_bytes(plain_program(random.Random(i), spaces_in_footer=False).encode())
    (src / "model.py").write_text("import torch\n\nx = torch.ones(2)\n")
    report = convert_path(src, out, jobs=2, use_cache=False)
    for i in range(30):
        name = f"plain{i:02d}.py"
        assert (out / name).read_bytes() == (src / name).read_bytes(), name
    statuses = {f.path: f.status for f in report.files}
    assert statuses.pop("model.py") == "converted" and set(statuses.values()) == {"unchanged"}


# Programs the generated ones found, once bugs (kept as regression tests): a method the first pass wrote with
# numpy's keyword names (torch takes them too), a name assigned from a size query, a method chained on a size query.
# Each keeps one torch call the converter cannot map, so its output still mentions torch and a second pass really
# converts it.
_KEEP = "torch.frobnicate(0)  # keeps the output a torch file\n"
ONCE_BUGS = {
    "method-keywords-read-as-torch": "import torch\n\n\ndef f(x):\n    return x.squeeze(1), x.softmax(dim=-1)\n\n\n" + _KEEP,
    "receiver-kind-changes": "import torch\n\n\ndef f(x):\n    n = x.dim()\n    x = (32).size()\n    return n\n\n\n" + _KEEP,
    "chained-on-a-rewritten-call": "import torch\n\nx = (63).size(-1).softmax(2)\n" + _KEEP,
}


@pytest.mark.parametrize("name", sorted(ONCE_BUGS))
def test_programs_that_once_changed_on_a_second_pass(name):
    assert_idempotent(ONCE_BUGS[name])


def test_known_libcst_footer_bug_in_convert_source():
    result = convert_source(LIBCST_FOOTER_BUG, "plain.py")
    assert result.code == LIBCST_FOOTER_BUG and not result.changed


def test_a_file_no_rule_changes_is_copied_in_a_tree(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "plain.py").write_text(LIBCST_FOOTER_BUG)
    report = convert_path(tmp_path / "src", tmp_path / "out", jobs=1)
    assert (tmp_path / "out" / "plain.py").read_text() == LIBCST_FOOTER_BUG
    assert report.files[0].status == "unchanged"
