"""User mapping tables (overlays): `--mappings FILE.toml` and `[mappings] extra` in mindport.toml add or replace
entries with the bundled schema, validated on load (file and entry named); `mindport mappings prove` proves them.
The installed package is never edited."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mindport import convert_source
from mindport.errors import InputError
from mindport.mappings import OVERLAY_HINT, MappingError, bundled_registry, load_registry, overlays
from mindport.migrator.repo import convert_path

CLI = [sys.executable, "-m", "mindport.cli"]
ADD = '''[[api]]
torch = "torch.frobnicate"
signature = "(input, *, scale=1.0)"
nn = "mindspore.ops.relu"
unsupported = { scale = "relu has no scale" }
positional = ["input"]
'''
REPLACE = '''[[api]]
torch = "torch.special.xlogy"
signature = "(input, other)"
nn = "mindspore.ops.xlogy"
positional = ["input", "other"]
example = { args = "x, y", inputs = { x = "randpos(2, 3)", y = "randpos(2, 3)" } }
'''
SOURCE = "import torch\n\n\ndef f(x, y):\n    return torch.frobnicate(x) + torch.special.xlogy(x, y)\n"


@pytest.fixture
def tables(tmp_path):
    add, replace = tmp_path / "add.toml", tmp_path / "replace.toml"
    add.write_text(ADD)
    replace.write_text(REPLACE)
    return add, replace


def test_overlays_add_and_replace_entries_for_the_block_only(tables):
    add, replace = tables
    bundled_target = bundled_registry().lookup("torch.special.xlogy").target("nn")
    assert bundled_target != "mindspore.ops.xlogy"
    with overlays([add, replace]) as registry:
        assert registry.lookup("torch.frobnicate").source == str(add)
        assert registry.lookup("torch.special.xlogy").target("nn") == "mindspore.ops.xlogy"
        code = convert_source(SOURCE).code
        assert "ops.relu(x)" in code and "ops.xlogy(x, y)" in code and "torch." not in code
    assert load_registry() is bundled_registry()
    plain = convert_source(SOURCE)
    assert [d.code for d in plain.diagnostics] == ["MP103"]  # torch.frobnicate is unknown without the overlay


def test_a_later_table_replaces_an_earlier_one(tmp_path, tables):
    add, _ = tables
    again = tmp_path / "again.toml"
    again.write_text(ADD.replace("mindspore.ops.relu", "mindspore.ops.sigmoid"))
    with overlays([add, again]):
        assert "ops.sigmoid(x)" in convert_source("import torch\ny = torch.frobnicate(x)\n").code


def test_a_tree_converts_with_overlays_in_worker_processes_and_the_cache_follows_them(tmp_path, tables):
    add, _ = tables
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for i in range(5):
        (src / f"m{i}.py").write_text("import torch\n\ny = torch.frobnicate(x)\n")
    report = convert_path(src, out, jobs=2, mappings=[add])
    assert report.ok and all("ops.relu(x)" in (out / f"m{i}.py").read_text() for i in range(5))
    again = convert_path(src, out, jobs=2, mappings=[add])
    assert {f.status for f in again.files} == {"cached"}
    add.write_text(ADD.replace("mindspore.ops.relu", "mindspore.ops.tanh"))
    third = convert_path(src, out, jobs=2, mappings=[add])
    assert {f.status for f in third.files} == {"converted"}
    assert "ops.tanh(x)" in (out / "m0.py").read_text()
    without = convert_path(src, out, jobs=2)
    assert not without.ok  # back to MP103 without the table


def test_mindport_toml_names_tables_for_convert_and_migrate(tmp_path, tables):
    add, replace = tables
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text(SOURCE)
    (src / "mindport.toml").write_text(f'[mappings]\nextra = ["{add}"]\n')
    run = subprocess.run([*CLI, "convert", str(src), "-o", str(tmp_path / "out"), "--mappings", str(replace)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    code = (tmp_path / "out" / "model.py").read_text()
    assert "ops.relu(x)" in code and "ops.xlogy(x, y)" in code
    (src / "mindport.toml").write_text('[mappings]\nextra = ["add.toml", "replace.toml"]\n')  # relative to the file
    for table in tables:
        (src / table.name).write_text(table.read_text())
    run = subprocess.run([*CLI, "migrate", str(src), "-o", str(tmp_path / "migrated"), "--no-models"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ops.relu(x)" in (tmp_path / "migrated" / "model.py").read_text()


@pytest.mark.parametrize(("table", "message"), [
    ('[[api]]\ntorch = "torch.frobnicate"\nnn = "mindspore.ops.relu"\nsignature = "(input)"\nbogus = 1\n',
     "entry torch.frobnicate: unknown key(s) ['bogus']"),
    ('[[api]]\ntorch = "torch.frobnicate"\nnn = "relu"\nsignature = "(input)"\n',
     "entry torch.frobnicate: target nn='relu' must be"),
    ('[[api]]\ntorch = "torch.frobnicate"\nnn = "mindspore.ops.relu"\n',
     "entry torch.frobnicate: a callable entry needs a 'signature'"),
    ('[[api]]\ntorch = "torch.frobnicate"\nnn = "mindspore.ops.relu"\nsignature = "(input)"\nexample = 3\n',
     "entry torch.frobnicate: a value has the wrong type"),
    ('[[api]]\ntorch = "torch.a"\nnn = "mindspore.ops.relu"\nsignature = "(input)"\n'
     '[[api]]\ntorch = "torch.a"\nnn = "mindspore.ops.relu"\nsignature = "(input)"\n', "duplicate entry torch.a"),
    ("[[api]\ntorch = 1\n", "not valid TOML"),
    ("api = 3\n", "entries go in [[api]] tables"),
])
def test_invalid_tables_are_refused_naming_the_file_and_the_entry(tmp_path, table, message):
    path = tmp_path / "mine.toml"
    path.write_text(table)
    with pytest.raises(MappingError) as caught, overlays([path]):
        pass
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)
    assert load_registry() is bundled_registry()
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text("import torch\n")
    with pytest.raises(InputError, match="mine.toml"):
        convert_path(src, tmp_path / "out", mappings=[path])
    run = subprocess.run([*CLI, "convert", str(src), "-o", str(tmp_path / "out"), "--mappings", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "mine.toml" in run.stderr and "Traceback" not in run.stderr


def test_a_missing_table_and_a_bad_mappings_section_are_input_errors(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text("import torch\n")
    run = subprocess.run([*CLI, "convert", str(src), "-o", str(tmp_path / "out"), "--mappings",
                          str(tmp_path / "missing.toml")], capture_output=True, text=True)
    assert run.returncode == 2 and "missing.toml: cannot read the mapping table" in " ".join(run.stderr.split())
    (src / "mindport.toml").write_text('[mappings]\ntables = ["x.toml"]\n')
    run = subprocess.run([*CLI, "convert", str(src), "-o", str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 2 and "[mappings] takes one key" in run.stderr


def test_the_fix_hint_of_an_unknown_api_points_to_overlays():
    [diag] = convert_source("import torch\ny = torch.frobnicate(x)\n").diagnostics
    assert diag.code == "MP103" and diag.suggestion == OVERLAY_HINT


def test_the_overlay_hint_names_the_option_the_docs_and_the_proof():
    assert "--mappings" in OVERLAY_HINT and "docs/mappings-schema.md" in OVERLAY_HINT
    assert "mappings prove" in OVERLAY_HINT and "mindport/mappings/data" not in OVERLAY_HINT
    assert "docs/mappings-schema.md#your-own-tables" in OVERLAY_HINT
    schema = (Path(__file__).resolve().parents[2] / "docs" / "mappings-schema.md").read_text()
    assert "\n## Your own tables\n" in schema


@pytest.mark.slow
def test_mappings_prove_runs_the_proofs_of_a_table(tmp_path, tables):
    _, replace = tables
    good = subprocess.run([*CLI, "mappings", "prove", str(replace)], capture_output=True, text=True, timeout=900)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "PASS torch.special.xlogy [nn-positional]" in good.stdout and "0 failed" in good.stdout
    mixed = tmp_path / "mixed.toml"
    mixed.write_text(REPLACE.replace("mindspore.ops.xlogy", "mindspore.ops.mul") + "\n" + ADD)
    bad = subprocess.run([*CLI, "mappings", "prove", str(mixed)], capture_output=True, text=True, timeout=900)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "FAIL torch.special.xlogy [nn-positional]" in bad.stdout and "max abs diff" in bad.stdout
    assert "NOT PROVEN torch.frobnicate: no example" in bad.stdout
    broken = tmp_path / "broken.toml"
    broken.write_text("[[api]]\ntorch = 3\n")
    refused = subprocess.run([*CLI, "mappings", "prove", str(broken)], capture_output=True, text=True, timeout=900)
    assert refused.returncode == 2 and "broken.toml" in refused.stderr
