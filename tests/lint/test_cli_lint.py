"""Drive `mindport lint` as users and CI do: a subprocess, its stdout and its exit code."""
from __future__ import annotations

import json
import re

from lint_helpers import run_lint  # noqa: F401  (fixture)

LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>MS\d{3}) (?P<msg>.+)$")

BAD = (
    "from mindspore import nn\n\n"
    "class Net(nn.Cell):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.layers = [nn.Dense(4, 4), nn.ReLU()]\n"
    "        self.conv = nn.Conv2d(3, 8, 3, pad_mode='valid', has_bias=True)\n"
    "        self.act = nn.GELU()\n\n"
    "    def forward(self, x):\n"
    "        return x.cuda()\n"
)
CLEAN = "from mindspore import nn\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        return x\n"


def _findings(stdout: str):
    return [m.groupdict() for m in map(LINE.match, stdout.splitlines()) if m]


def test_text_format_and_exit_1(tmp_path, run_lint):
    (tmp_path / "model.py").write_text(BAD)
    out = run_lint("model.py", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    found = _findings(out.stdout)
    codes = {f["code"] for f in found}
    assert {"MS107", "MS206", "MS302", "MS306"} <= codes
    ms107 = next(f for f in found if f["code"] == "MS107")
    assert (ms107["path"], ms107["line"], ms107["col"]) == ("model.py", "6", "23")
    assert "Found" in out.stdout.splitlines()[-1]


def test_clean_exit_0(tmp_path, run_lint):
    (tmp_path / "ok.py").write_text(CLEAN)
    out = run_lint(tmp_path)
    assert out.returncode == 0 and _findings(out.stdout) == []
    assert "All checks passed" in out.stdout


def test_select_and_ignore_prefixes(tmp_path, run_lint):
    f = tmp_path / "model.py"
    f.write_text(BAD)
    only_ms2 = {x["code"] for x in _findings(run_lint(f, "--select", "MS2").stdout)}
    assert only_ms2 == {"MS206"}
    rest = {x["code"] for x in _findings(run_lint(f, "--select", "MS1,MS3", "--ignore", "MS302").stdout)}
    assert rest == {"MS107", "MS306"}
    assert run_lint(f, "--ignore", "MS1", "--ignore", "MS2", "--ignore", "MS3").returncode == 0


def test_unknown_code_is_usage_error(tmp_path, run_lint):
    f = tmp_path / "ok.py"
    f.write_text(CLEAN)
    out = run_lint(f, "--select", "MS999")
    assert out.returncode == 2 and "unknown rule code" in out.stderr
    assert run_lint().returncode == 2  # no paths
    assert run_lint(tmp_path / "missing.py").returncode == 2


def test_syntax_error_is_a_finding(tmp_path, run_lint):
    (tmp_path / "broken.py").write_text("import mindspore\ndef construct(self, x:\n    return x\n")
    (tmp_path / "ok.py").write_text(CLEAN)
    out = run_lint(tmp_path, "--ignore", "MS0")  # MS001 cannot be ignored
    assert out.returncode == 1
    (finding,) = _findings(out.stdout)
    assert finding["code"] == "MS001" and finding["path"].endswith("broken.py") and finding["line"] == "2"


def test_non_utf8_file_is_input_error(tmp_path, run_lint):
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9t\xe9'\n")
    (tmp_path / "model.py").write_text(BAD)
    out = run_lint(tmp_path)
    assert out.returncode == 2
    assert "latin.py" in out.stderr and "UTF-8" in out.stderr
    assert "MS107" in out.stdout  # the other files are still linted
    # a declared encoding is honoured
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9t\xe9'\n")
    assert run_lint(tmp_path / "latin.py").returncode == 0


def test_json_output(tmp_path, run_lint):
    (tmp_path / "model.py").write_text(BAD)
    out = run_lint(tmp_path / "model.py", "--output-format", "json")
    data = json.loads(out.stdout)
    assert out.returncode == 1
    item = next(i for i in data["findings"] if i["code"] == "MS107")
    assert item["location"] == {"row": 6, "column": 23} and item["fixable"] is True
    assert item["name"] == "cell-container-in-init" and data["errors"] == []


def test_sarif_output(tmp_path, run_lint):
    (tmp_path / "model.py").write_text(BAD)
    data = json.loads(run_lint(tmp_path / "model.py", "--output-format", "sarif").stdout)
    assert data["version"] == "2.1.0"
    run = data["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "MS107" in rule_ids
    res = next(r for r in run["results"] if r["ruleId"] == "MS107")
    assert rule_ids[res["ruleIndex"]] == "MS107"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 6
    assert res["level"] == "error"


def test_github_output(tmp_path, run_lint):
    (tmp_path / "model.py").write_text(BAD)
    out = run_lint("model.py", "--output-format", "github", cwd=tmp_path)
    lines = out.stdout.splitlines()
    assert any(l.startswith("::error file=model.py,line=6,col=23,") and "::MS107 " in l for l in lines)
    assert any(l.startswith("::warning ") and "MS206" in l for l in lines)


def test_fix_rewrites_and_reports_the_rest(tmp_path, run_lint):
    f = tmp_path / "model.py"
    f.write_text(BAD)
    out = run_lint(f, "--fix")
    text = f.read_text()
    assert "self.layers = nn.CellList([nn.Dense(4, 4), nn.ReLU()])" in text
    assert text.replace("nn.CellList([nn.Dense(4, 4), nn.ReLU()])", "[nn.Dense(4, 4), nn.ReLU()]") == BAD
    assert "Fixed 1 finding" in out.stdout
    codes = {x["code"] for x in _findings(out.stdout)}
    assert "MS107" not in codes and "MS206" in codes and out.returncode == 1


def test_help_teaches_codes_noqa_and_config(run_lint):
    import subprocess
    import sys

    from lint_helpers import REPO, cli_env

    out = subprocess.run([sys.executable, "-m", "mindport.cli", "lint", "--help"], capture_output=True,
                         text=True, env=cli_env(), cwd=REPO)
    assert out.returncode == 0
    for needle in ("MS1xx", "MS5xx", "# noqa: MS107", "[tool.mindport.lint]", "--select", "Examples", "Exit codes"):
        assert needle in out.stdout, needle


def test_explain_and_list_rules(run_lint):
    out = run_lint("--explain", "ms201")
    assert out.returncode == 0 and out.stdout.startswith("# MS201 conv-implicit-pad-mode")
    listing = run_lint("--list-rules").stdout.splitlines()
    assert len(listing) >= 28 and listing[0].startswith("MS001")
    assert run_lint("--explain", "MS999").returncode == 2


def test_directory_walk_skips_venv_and_build(tmp_path, run_lint):
    for d in (".venv", "build", "src"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "m.py").write_text(BAD)
    out = run_lint(tmp_path)
    paths = {x["path"] for x in _findings(out.stdout)}
    assert paths and all("src" in p for p in paths)


def test_a_file_that_still_imports_torch_shows_its_leftovers(tmp_path):
    """Issue 28: lint showed only MS301 on a half-migrated file: `.backward()` and `.zero_grad()` outside a Cell
    class were suppressed because the file imports torch, which no document said."""
    import subprocess
    import sys

    (tmp_path / "train.py").write_text(
        "import torch\nimport mindspore as ms\n\nw = torch.load('m.pt')['w'].cpu().numpy()\n\n\n"
        "def step(opt, loss_fn, x, y):\n    opt.zero_grad()\n    loss = loss_fn(x, y)\n    loss.backward()\n")
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "lint", "train.py"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert run.returncode == 1
    codes = [line.split()[1] for line in run.stdout.splitlines() if line.startswith("train.py:")]
    assert codes == ["MS301", "MS304", "MS303"], run.stdout  # torch.load(...).cpu() is torch's own value: not flagged
