"""convert_path on real trees on disk: mirroring, encodings, notebooks, requirement files, safety, cache."""
from __future__ import annotations

import ast
import codecs
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mindport.errors import InputError
from mindport.migrator.repo import convert_path
from mindport.migrator.tree import CACHE_NAME

MODEL = """import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)  # classifier

    def forward(self, x):
        return self.fc(x)
"""


def make_tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "heads.py").write_text(
        "from .model import Net\n\n\nclass Head(Net):\n    def forward(self, x):\n        return super().forward(x)\n")
    (root / "data.csv").write_text("a,b\n1,2\n")
    (root / "requirements.txt").write_text("numpy>=1.20\ntorch>=2.0\ntorchvision\n")
    (root / "pyproject.toml").write_text('[project]\ndependencies = ["torch>=2.1", "rich"]\n')
    return root


def test_tree_is_mirrored_and_converted(tmp_path):
    src = make_tree(tmp_path / "src")
    report = convert_path(src, tmp_path / "out", jobs=1)
    out = tmp_path / "out"
    assert report.ok, [d.format() for d in report.diagnostics]
    model = (out / "pkg" / "model.py").read_text()
    assert "class Net(nn.Cell):" in model and "def construct(self, x):" in model
    assert "nn.Dense(in_channels=4, out_channels=2)  # classifier" in model
    # project-local base class across files: Head subclasses Net, so its forward is renamed too
    heads = (out / "pkg" / "heads.py").read_text()
    assert "def construct(self, x):" in heads and "super(Head, self).construct(x)" in heads  # GRAPH_MODE: super() is super(type(self), self)
    assert (out / "data.csv").read_text() == "a,b\n1,2\n"
    requirements = (out / "requirements.txt").read_text()
    assert "mindspore==2.10.*" in requirements and "\ntorch" not in requirements
    assert "# torchvision" in requirements
    assert '"mindspore==2.10.*"' in (out / "pyproject.toml").read_text()
    statuses = {f.path: f.status for f in report.files}
    assert statuses["pkg/model.py"] == "converted" and statuses["data.csv"] == "copied"
    assert (src / "pkg" / "model.py").read_text() == MODEL  # the source is never touched


def test_rerun_uses_the_cache_and_a_change_invalidates_it(tmp_path):
    src = make_tree(tmp_path / "src")
    convert_path(src, tmp_path / "out", jobs=1)
    assert (tmp_path / "out" / CACHE_NAME).is_file()
    again = convert_path(src, tmp_path / "out", jobs=1)
    assert {f.path: f.status for f in again.files}["pkg/model.py"] == "cached"
    (src / "pkg" / "model.py").write_text(MODEL.replace("nn.Linear(4, 2)", "nn.Linear(4, 3)"))
    third = convert_path(src, tmp_path / "out", jobs=1)
    assert {f.path: f.status for f in third.files}["pkg/model.py"] == "converted"
    assert "out_channels=3" in (tmp_path / "out" / "pkg" / "model.py").read_text()


def test_parallel_jobs_give_the_same_output(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(6):
        (src / f"m{i}.py").write_text(MODEL)
    convert_path(src, tmp_path / "serial", jobs=1, use_cache=False)
    convert_path(src, tmp_path / "parallel", jobs=2, use_cache=False)
    for i in range(6):
        assert (tmp_path / "serial" / f"m{i}.py").read_text() == (tmp_path / "parallel" / f"m{i}.py").read_text()


def test_encodings_and_line_endings_are_preserved(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "bom.py").write_bytes(codecs.BOM_UTF8 + MODEL.encode())
    (src / "crlf.py").write_bytes(MODEL.replace("\n", "\r\n").encode())
    latin = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + MODEL
    (src / "latin.py").write_bytes(latin.encode("latin-1"))
    (src / "tabs.py").write_text(MODEL.replace("    ", "\t"))
    report = convert_path(src, tmp_path / "out", jobs=1)
    assert report.ok, [d.format() for d in report.diagnostics]
    out = tmp_path / "out"
    assert (out / "bom.py").read_bytes().startswith(codecs.BOM_UTF8)
    crlf = (out / "crlf.py").read_bytes()
    assert b"nn.Cell" in crlf and crlf.count(b"\r\n") == crlf.count(b"\n")
    assert (out / "latin.py").read_bytes().decode("latin-1").startswith("# -*- coding: latin-1 -*-\n# caf\xe9")
    assert "\tdef construct(self, x):" in (out / "tabs.py").read_text()


def test_bad_files_get_one_diagnostic_each_and_the_rest_converts(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.py").write_text(MODEL)
    (src / "broken.py").write_text("def f(:\n    pass\n")
    (src / "binary.py").write_bytes(b"\x00\x01\x02torch")
    (src / "undecodable.py").write_bytes(b"x = '\xff\xfe'\n")
    (src / "empty.py").write_text("")
    report = convert_path(src, tmp_path / "out", jobs=1)
    codes = {d.file: d.code for d in report.diagnostics}
    assert codes == {"broken.py": "MP201", "binary.py": "MP203", "undecodable.py": "MP202"}
    assert not report.ok
    for name in ("broken.py", "binary.py", "undecodable.py", "empty.py"):
        assert (tmp_path / "out" / name).read_bytes() == (src / name).read_bytes()
    assert "nn.Cell" in (tmp_path / "out" / "good.py").read_text()


def test_notebook_code_cells_are_converted_and_json_stays_valid(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    notebook = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# torch notes\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["%matplotlib inline\n", "import torch\n", "x = torch.flatten(torch.relu(y), 1)\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (src / "nb.ipynb").write_text(json.dumps(notebook))
    convert_path(src, tmp_path / "out", jobs=1)
    converted = json.loads((tmp_path / "out" / "nb.ipynb").read_text())
    code = "".join(converted["cells"][1]["source"])
    assert code.startswith("%matplotlib inline\n")
    assert "ops.flatten(ops.relu(y), start_dim=1)" in code
    assert converted["cells"][0] == notebook["cells"][0]


def test_diff_writes_nothing(tmp_path):
    src = make_tree(tmp_path / "src")
    report = convert_path(src, tmp_path / "out", diff=True, jobs=1)
    assert not (tmp_path / "out").exists()
    diff = "".join(f.diff for f in report.files)
    assert "-class Net(nn.Module):" in diff and "+class Net(nn.Cell):" in diff


def test_refuses_out_inside_src_and_foreign_out(tmp_path):
    src = make_tree(tmp_path / "src")
    with pytest.raises(InputError, match="inside the source"):
        convert_path(src, src / "converted")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    with pytest.raises(InputError, match="not written by mindport"):
        convert_path(src, foreign)
    assert (foreign / "keep.txt").read_text() == "precious"


def test_in_place_writes_backups(tmp_path):
    src = make_tree(tmp_path / "src")
    convert_path(src, in_place=True, jobs=1)
    assert "nn.Cell" in (src / "pkg" / "model.py").read_text()
    assert (src / "pkg" / "model.py.orig").read_text() == MODEL


def test_cli_convert_json_and_exit_codes(tmp_path):
    src = make_tree(tmp_path / "src")
    (src / "pkg" / "odd.py").write_text("import torch\n\ny = torch.some_unknown_api(3)\n")
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "convert", str(src), "-o", str(tmp_path / "out"),
                          "--format", "json", "-j", "1"], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    [diag] = [d for f in report["files"] for d in f["diagnostics"]]
    assert diag["code"] == "MP103" and diag["file"] == "pkg/odd.py" and diag["line"] == 3
    converted = (tmp_path / "out" / "pkg" / "odd.py").read_text()
    ast.parse(converted)
    assert "# mindport: MP103" in converted
    assert json.loads((tmp_path / "out" / "mindport-report.json").read_text())["ok"] is False
    usage = subprocess.run([sys.executable, "-m", "mindport.cli", "convert", str(src)], capture_output=True, text=True)
    assert usage.returncode == 2 and "give -o OUT" in usage.stderr


def test_module_classes_across_files_in_worker_processes(tmp_path):
    """The worker pool converts new files before the project's module classes are known, and converts again the
    files those classes change: Head (heads.py) subclasses Net (model.py), so its forward becomes construct, and
    stops doing so when Net is no longer a Module. Each file is reported to the progress callback once."""
    src = make_tree(tmp_path / "src")
    for i in range(4):  # enough Python files for the pool to start
        (src / "pkg" / f"extra{i}.py").write_text("import torch\n\nx = torch.ones(2)\n")
    seen: list[tuple[str, int, int]] = []
    out = tmp_path / "out"
    report = convert_path(src, out, jobs=2, progress=lambda *args: seen.append(args))
    assert report.ok
    assert "def construct(self, x):" in (out / "pkg" / "heads.py").read_text()
    names = [rel for rel, _, _ in seen]
    assert len(names) == len(set(names)) and "pkg/heads.py" in names
    assert [done for _, done, _ in seen] == list(range(1, len(report.files) + 1))
    assert {total for _, _, total in seen} == {len(report.files)}
    (src / "pkg" / "model.py").write_text(MODEL.replace("class Net(nn.Module):", "class Net:"))
    convert_path(src, out, jobs=2)
    heads = (out / "pkg" / "heads.py").read_text()
    assert "def forward(self, x):" in heads and "construct" not in heads


def test_the_packaging_lists_what_the_converted_code_imports(tmp_path):
    """Issue 28: torch was replaced by MindSpore even while a file still imported torch, and mindport was never
    listed although the converted code imports mindport.runtime."""
    from mindport import __version__

    runtime = f"mindport[runtime]~={'.'.join(__version__.split('.')[:2])}.0"
    src = make_tree(tmp_path / "src")
    (src / "pkg" / "act.py").write_text("import torch.nn as nn\n\n\nclass Act(nn.Module):\n    def __init__(self):\n"
                                        "        super().__init__()\n"
                                        "        self.conv = nn.Conv2d(2, 2, 3, padding=1, padding_mode='reflect')\n")
    (src / "ext.py").write_text("import torch.utils.cpp_extension\n\n\ndef build():\n"
                                "    return torch.utils.cpp_extension.load(name='ext', sources=['ext.cpp'])\n")
    convert_path(src, tmp_path / "out", jobs=1)
    out = tmp_path / "out"
    assert "from mindport.runtime import layers" in (out / "pkg" / "act.py").read_text()
    assert "import torch.utils.cpp_extension" in (out / "ext.py").read_text()  # left for the user: MP103
    assert (out / "requirements.txt").read_text() == \
        f"numpy>=1.20\ntorch>=2.0\nmindspore==2.10.*\n{runtime}\n" \
        "# torchvision  # mindport: no MindSpore package; use mindspore.dataset\n"
    assert f'dependencies = ["torch>=2.1", "mindspore==2.10.*", "{runtime}", "rich"]' in \
        (out / "pyproject.toml").read_text()
    # the leftover converted by hand and the runtime layer unused: neither torch nor mindport stays listed
    (src / "ext.py").unlink()
    (src / "pkg" / "act.py").unlink()
    again = convert_path(src, tmp_path / "out2", jobs=1)
    assert again.ok
    assert (tmp_path / "out2" / "requirements.txt").read_text() == \
        "numpy>=1.20\nmindspore==2.10.*\n# torchvision  # mindport: no MindSpore package; use mindspore.dataset\n"
    assert 'dependencies = ["mindspore==2.10.*", "rich"]' in (tmp_path / "out2" / "pyproject.toml").read_text()


def test_a_single_file_conversion_writes_only_its_output(tmp_path):
    """Issue 28: `convert model.py -o model_ms.py` overwrote a mindport-report.json beside the output and added
    .mindport-cache.json there."""
    (tmp_path / "model.py").write_text(MODEL)
    beside = tmp_path / "out"
    beside.mkdir()
    (beside / "mindport-report.json").write_text('{"the user\'s": 1}')
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "convert", "model.py", "-o", "out/model_ms.py"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.name for p in beside.iterdir()) == ["mindport-report.json", "model_ms.py"]
    assert (beside / "mindport-report.json").read_text() == '{"the user\'s": 1}'
    assert "class Net(nn.Cell):" in (beside / "model_ms.py").read_text()


def test_an_output_holding_another_sources_conversion_is_refused_or_replaced(tmp_path):
    """Converting another source into an existing mindport output mixed both runs' files, silently."""
    first = make_tree(tmp_path / "first")
    second = tmp_path / "second"
    second.mkdir()
    (second / "net.py").write_text(MODEL)
    out = tmp_path / "out"
    convert_path(first, out, jobs=1)
    (out / "mindport-logs").mkdir()  # what `migrate` adds beside the tree
    with pytest.raises(InputError, match="holds the conversion of another source .*first.*--force"):
        convert_path(second, out, jobs=1)
    assert (out / "pkg" / "model.py").is_file()  # refused: nothing touched
    convert_path(first, out, jobs=1)  # the same source again is a re-run
    report = convert_path(second, out, jobs=1, force=True)
    assert report.ok
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == [CACHE_NAME, "net.py"]


def test_a_project_moved_whole_is_still_its_own_conversion(tmp_path):
    """A project folder holding the source and its conversion, copied or moved elsewhere: converting it again there
    was refused as "the conversion of another source" (the mark named the old absolute path)."""
    import shutil

    first = make_tree(tmp_path / "project" / "src")
    convert_path(first, tmp_path / "project" / "out", jobs=1)
    shutil.copytree(tmp_path / "project", tmp_path / "moved", symlinks=True)
    report = convert_path(tmp_path / "moved" / "src", tmp_path / "moved" / "out", jobs=1)
    assert report.ok
    other = tmp_path / "moved" / "other"
    other.mkdir()
    (other / "net.py").write_text(MODEL)
    with pytest.raises(InputError, match="holds the conversion of another source"):
        convert_path(other, tmp_path / "moved" / "out", jobs=1)


def test_a_file_too_deep_for_ast_still_counts_its_imports(tmp_path):
    """A file deeper than Python's recursion limit (it fails to convert, copied unchanged) crashed the whole run with
    a RecursionError where the packaging read its imports; it still imports torch, so the requirements keep torch."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "net.py").write_text(MODEL)
    (src / "deep.py").write_text("import torch\nx = " + " + ".join(["a"] * 40_000) + "\n")
    (src / "requirements.txt").write_text("torch>=2.0\n")
    report = convert_path(src, tmp_path / "out", jobs=1, timeout=5)  # it fails: stopped by the time limit
    assert {f.path: f.status for f in report.files}["deep.py"] == "failed"
    assert "torch" in (tmp_path / "out" / "requirements.txt").read_text()


def test_an_empty_source_folder_is_an_input_error(tmp_path):
    (tmp_path / "empty").mkdir()
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "convert", "empty", "-o", "out"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert run.returncode == 2 and "empty has no files to convert" in run.stderr, run.stdout + run.stderr
    assert "files:" not in run.stdout and not (tmp_path / "out").exists()


def test_a_file_that_failed_is_still_failed_on_a_re_run(tmp_path):
    """Issue 28: on a re-run a file that failed (syntax error, copied unchanged) was reported "cached"."""
    src = make_tree(tmp_path / "src")
    for n in range(4):
        (src / f"broken{n}.py").write_text("def f(:\n    pass\n")
    first = convert_path(src, tmp_path / "out", jobs=1)
    again = convert_path(src, tmp_path / "out", jobs=1)
    for report in (first, again):
        assert report.totals()["by_status"]["failed"] == 4 and not report.ok
    assert {f.path: f.status for f in again.files}["pkg/model.py"] == "cached"
