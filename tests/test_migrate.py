"""`mindport migrate` end to end on the bundled example: real torch training, real conversion, real MindSpore."""
from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mindport.errors import InputError
from mindport.mappings import load_registry
from mindport.migrate import SCRIPTS_DIR, migrate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cifar_resnet"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp("torch") / "model.pt"
    run = subprocess.run([sys.executable, str(EXAMPLE / "train.py"), "--steps", "3", "--save", str(path)],
                         capture_output=True, text=True, cwd=EXAMPLE)
    assert run.returncode == 0, run.stderr
    return path


def test_cli_migrates_the_example_with_parity(tmp_path, checkpoint):
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "migrate", str(EXAMPLE), "-o", str(out),
                          "--weights", str(checkpoint)], capture_output=True, text=True)
    assert "rtol/atol" in run.stdout and "…" not in run.stdout  # tables are whole off a terminal
    report = json.loads((out / "mindport-report.json").read_text())
    assert report["weights"]["ok"] and report["parity"]["ok"] and report["export"]["ok"]
    left = [d for f in report["conversion"]["files"] for d in f["diagnostics"] if d["severity"] != "info"]
    last = run.stdout.strip().splitlines()[-1]
    if left:  # honest exit: any site left makes the migration partial, and the last line says which
        assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
        first = left[0]
        assert last.startswith("migration partial:") and f"{first['file']}:{first['line']}:{first['column']} " \
            f"{first['code']}" in last
        assert report["ok"] is False and report["shortfalls"]
    else:
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert last.startswith("migration OK") and report["ok"]
    assert (out / "mindport_export" / "SmallResNet.mindir").is_file()
    [output] = report["parity"]["outputs"]
    assert output["max_abs"] <= 1e-5 * max(1.0, output.get("ref_max_abs", 1.0))
    assert (out / "model.ckpt").is_file() and (out / "mindport-report.html").read_text().count("<svg") >= 1
    # the project's own train.py is converted, never replaced by the emitted template
    assert "value_and_grad" in (out / "train.py").read_text() or "grad_fn" in (out / "train.py").read_text()
    assert (out / SCRIPTS_DIR / "train.py").is_file() and (out / SCRIPTS_DIR / "eval.py").is_file()
    assert "import torch" not in (out / "model.py").read_text()
    # converted means it runs: the project's own training script trains on MindSpore
    train = subprocess.run([sys.executable, "train.py", "--steps", "2", "--save", str(out / "trained.ckpt")],
                           capture_output=True, text=True, cwd=out)
    assert train.returncode == 0, train.stderr[-3000:]
    assert (out / "trained.ckpt").is_file()


def test_relative_output_path(tmp_path, checkpoint, monkeypatch):
    """`make demo` passes relative paths: every step must resolve them the same way."""
    monkeypatch.chdir(tmp_path)
    report = migrate(EXAMPLE, Path("build") / "demo", weights=checkpoint, jobs=1)
    assert report.weights["ok"] and report.parity.ok and report.export.ok and not report.problems, \
        [p.format() for p in report.problems]
    assert report.ok == (not report.conversion.unconverted)
    assert (tmp_path / "build" / "demo" / SCRIPTS_DIR / "train.py").is_file()


def test_a_disabled_layer_conversion_fails_and_names_the_layer(tmp_path, checkpoint, monkeypatch):
    """Break the MaxPool2d mapping (no stride fix-up): parity must fail at that layer, exit code 1."""
    registry = load_registry()
    entry = registry.lookup("torch.nn.MaxPool2d")
    broken = dataclasses.replace(entry, transforms=(), emit=())
    monkeypatch.setitem(registry.entries, "torch.nn.MaxPool2d", broken)
    report = migrate(EXAMPLE, tmp_path / "out", weights=checkpoint, jobs=1)
    assert not report.ok
    assert report.parity is not None and not report.parity.ok
    assert report.parity.first_divergent is not None
    assert report.parity.first_divergent.path == "stem.3"


def test_unconverted_api_makes_migrate_exit_1_and_say_where(tmp_path, checkpoint):
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src)
    (src / "extra.py").write_text("import torch\n\nz = torch.some_unknown_api(1)\n")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "migrate", str(src), "-o", str(out),
                          "--weights", str(checkpoint)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "extra.py:3:5: MP103 torch.some_unknown_api" in run.stdout


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"inputs": ["2x3x32:complex"]}, "expected SHAPE:DTYPE"),
    ({"model": "model.py:NoSuchNet"}, "has no 'NoSuchNet'"),
    ({"model": "missing.py:Net"}, "does not exist"),
])
def test_input_errors(tmp_path, kwargs, message):
    with pytest.raises(InputError, match=message):
        migrate(EXAMPLE, tmp_path / "out", jobs=1, **kwargs)
    assert not (tmp_path / "out").exists()  # nothing written before the arguments are known to be good


def test_missing_source_is_a_usage_error(tmp_path):
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "migrate", str(tmp_path / "nope"), "-o",
                          str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 2


def test_each_model_is_built_once_and_the_report_is_one_style(tmp_path, checkpoint, monkeypatch):
    """The torch model and its port are each built once, in their own process, where the checkpoint is converted and
    parity checked (the port was built twice before: once for the weights, once for parity)."""
    from mindport.validators.parity.report import STYLE

    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src)
    model = src / "model.py"
    code = model.read_text()
    init = "    def __init__(self, num_classes: int = 10, width: int = 16):\n        super().__init__()\n"
    assert init in code
    model.write_text("import os\n" + code.replace(
        init, init + "        with open(os.environ['MINDPORT_TEST_BUILDS'], 'a') as log:\n"
                     "            log.write(type(self).__mro__[1].__name__ + '\\n')\n"))
    builds = tmp_path / "builds.txt"
    monkeypatch.setenv("MINDPORT_TEST_BUILDS", str(builds))
    report = migrate(src, tmp_path / "out", weights=checkpoint, jobs=1)
    assert report.ok, [p.format() for p in report.problems]
    assert sorted(builds.read_text().split()) == ["Cell", "Module"]  # one torch build, one MindSpore build
    assert report.weights["ok"] and report.weights["output"] == str((tmp_path / "out" / "model.ckpt").resolve())
    assert report.weights["parameters"] == report.parity.weights["transferred"]
    html = (tmp_path / "out" / "mindport-report.html").read_text()
    assert STYLE in html and html.count("<style>") == 1  # the parity sections share the page and its style
    weights = html[html.index("<h2>Weights</h2>"):]
    assert weights.startswith("<h2>Weights</h2>\n<table>") and "<pre>" not in weights.split("<h2>", 2)[1]
    assert "stem.0.weight" in html  # the name map, as a table
    assert (tmp_path / "out" / "mindport-logs" / "mindspore.log").is_file()


def test_the_migrated_project_runs_after_it_is_moved(tmp_path, checkpoint):
    """Generated scripts hold paths relative to themselves (they held sys.path.insert(0, '/abs/out') and an absolute
    INITIAL_CHECKPOINT): the converted project, moved elsewhere, still trains from the converted checkpoint."""
    report = migrate(EXAMPLE, tmp_path / "built", weights=checkpoint, jobs=1, export=False)
    assert report.weights["ok"], report.weights
    moved = tmp_path / "elsewhere" / "project"
    moved.parent.mkdir()
    shutil.move(tmp_path / "built", moved)
    for script in (moved / SCRIPTS_DIR).glob("*.py"):
        assert str(tmp_path) not in script.read_text(), script
    run = subprocess.run([sys.executable, str(moved / SCRIPTS_DIR / "train.py"), "--steps", "1", "--epochs", "1",
                          "--ckpt-dir", str(tmp_path / "ckpt")], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert f"loaded {moved / 'model.ckpt'}" in run.stdout


PORT_ONLY_FAILURE = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, fail_in_init=False):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        if fail_in_init and type(self.fc).__module__.startswith("mindspore"):
            raise RuntimeError("the port fails while it is built")

    def forward(self, x):
        y = self.fc(x)
        if type(y).__module__.startswith("mindspore"):
            raise RuntimeError("the port fails while it runs")
        return y
"""


@pytest.mark.parametrize(("ctor", "message", "code"), [("", "while it runs", "MP401"),
                                                        ("fail_in_init=True", "while it is built", "MP400")])
def test_where_the_mindspore_side_failed_is_said_at_its_converted_line(tmp_path, ctor, message, code):
    """Issue 28: migrate said `MP400 ... RuntimeError` with no file or line, wrote empty logs and `parity: null`
    (its export step, run after the failure, raised), while validate showed the converted line."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text(PORT_ONLY_FAILURE)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "migrate", str(src), "-o", str(out), "--model",
                          "model.py:Net", "--ctor", ctor, "--input", "2x4:float32"], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    converted = out / "model.py"
    line = next(n for n, text in enumerate(converted.read_text().splitlines(), 1) if message in text)
    assert f"{converted}:{line}:0: {code} " in run.stdout, run.stdout
    assert f"at {converted}:{line}: RuntimeError: the port fails" in run.stdout.strip().splitlines()[-1]
    report = json.loads((out / "mindport-report.json").read_text())
    if code == "MP401":  # the port ran and raised: a parity report that says where
        assert report["parity"]["verdict"] == "diverged" and report["parity"]["ms_error_site"] == f"{converted}:{line}"
    else:
        assert {"code": "MP400", "file": str(converted), "line": line} == {
            k: v for k, v in report["problems"][0].items() if k in ("code", "file", "line")}
    assert "Traceback" in (out / "mindport-logs" / "mindspore.log").read_text()  # the log has the stack


def test_the_html_report_says_each_fix_once(tmp_path):
    """Issue 28: the HTML diagnostics table repeated the same long fix text on every row."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text("import torch\n\n\ndef f(x):\n    a = torch.some_unknown_api(x)\n"
                                  "    b = torch.another_unknown_api(x)\n    return torch.third_unknown_api(a, b)\n")
    report = migrate(src, tmp_path / "out", jobs=1)
    fixes = {d.suggestion for d in report.conversion.diagnostics}
    assert len(report.conversion.diagnostics) == 3 and len(fixes) == 1
    html = (tmp_path / "out" / "mindport-report.html").read_text()
    assert "mindport mappings prove" in fixes.pop() and html.count("mindport mappings prove") == 1 and html.count('href="#fix-1"') == 3
