"""The mapping tables' loader: every bundled file validates, and each kind of mistake is a load error that names
the file and the entry."""
from __future__ import annotations

import subprocess
import sys

import pytest

from mindport.mappings import MappingError, load_entries, load_registry
from mindport.mappings.coverage import DOCS_PATH, coverage, render_docs

GOOD = '''
[[api]]
torch = "torch.nn.Tanh"
signature = "()"
nn = "mindspore.nn.Tanh"
'''


def write(tmp_path, text, name="t.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_bundled_tables_load_and_are_large():
    registry = load_registry()
    assert len({id(e) for e in registry}) >= 100
    conv = registry.lookup("torch.nn.Conv2d")
    assert conv.target("nn") == "mindspore.nn.Conv2d" and conv.rename["bias"] == "has_bias"


@pytest.mark.parametrize(("mutation", "message"), [
    (GOOD.replace('signature = "()"', 'signature = "()"\nfoo = 1'), r"entry torch.nn.Tanh: unknown key\(s\) \['foo'\]"),
    (GOOD.replace('nn = "mindspore.nn.Tanh"', ""), "no target"),
    (GOOD + GOOD, "duplicate entry torch.nn.Tanh"),
    (GOOD.replace('signature = "()"', 'signature = "(x"'), "does not parse"),
    (GOOD.replace('signature = "()"', 'signature = "(x)"\nrename = { y = "z" }'), r"'rename' names argument\(s\) \['y'\]"),
    (GOOD + 'transforms = ["no_such_transform"]\n', "unknown call transform 'no_such_transform'"),
    (GOOD + 'runs = { nn = ["TPU"] }\n', "runs must map"),
    (GOOD + 'example = { args = "", bogus = 1 }\n', r"unknown example key\(s\) \['bogus'\]"),
    (GOOD.replace('nn = "mindspore.nn.Tanh"', 'nn = "torch.nn.Tanh"'), "must be 'mindspore"),
    (GOOD + 'keeps_dtype = true\n', "keeps_dtype is for in-place method entries"),
    (GOOD + 'keeps_dtype = 1\n', "keeps_dtype must be true or false"),
])
def test_schema_errors_name_the_entry(tmp_path, mutation, message):
    with pytest.raises(MappingError, match=message) as info:
        load_entries([write(tmp_path, mutation)])
    assert "t.toml" in str(info.value)


def test_keeps_dtype_is_table_data():
    """The in-place methods whose out-of-place form keeps the receiver's dtype (native23's list, now a column of the
    tables): the converter writes their out-of-place entry on a fresh receiver (tests/converter/test_fresh_inplace.py)."""
    flagged = {e.torch for e in load_registry() if e.keeps_dtype}
    assert flagged == {f"torch.Tensor.{m}" for m in ("triu_", "tril_", "masked_fill_", "index_fill_", "neg_",
                                                      "unsqueeze_", "squeeze_", "t_", "transpose_")}


def test_duplicates_across_files_are_found(tmp_path):
    with pytest.raises(MappingError, match="duplicate entry torch.nn.Tanh .first in a.toml"):
        load_entries([write(tmp_path, GOOD, "a.toml"), write(tmp_path, GOOD, "b.toml")])


def test_docs_page_is_fresh():
    assert DOCS_PATH.read_text(encoding="utf-8") == render_docs(), (
        "docs/mappings.md is stale: run `python -m mindport.mappings.coverage --write-docs`")


def test_every_r24_row_is_accounted_for():
    """No official r2.4 row may be silently absent: each has an entry, proven or unsupported with a reason."""
    result = coverage()
    assert result["r2.4"]["total"].get("missing", 0) == 0, result["r2.4"]["by_namespace"]
    # every r2.4 row with a supported entry is proven (torch.distributed's in 2 processes: tests/distributed)
    assert result["r2.4"]["supported_not_proven"] == []
    assert result["all_entries"]["proven"] >= 1000


def test_coverage_cli_prints_both_tables():
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "mappings", "coverage"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "official r2.4 table" in run.stdout and "official master table" in run.stdout
    show = subprocess.run([sys.executable, "-m", "mindport.cli", "mappings", "show", "torch.nn.NoSuchLayer"],
                          capture_output=True, text=True)
    assert show.returncode == 2 and "no mapping entry" in show.stderr
