"""`mindport validate` exit codes (0 parity, 1 divergence, 2 usage/input error) and clear errors for bad input."""
from __future__ import annotations

import json

import pytest

from parity_helpers import MODELS, convert_model, run_cli
from mindport.errors import InputError
from mindport.validators.parity.compare import validate


def test_cli_parity_exit_0(tmp_path):
    ms_file = convert_model("convnet", tmp_path)
    res = run_cli("--torch", f"{MODELS}/convnet.py:ConvNet", "--ms", f"{ms_file}:ConvNet", "--ctor", "num_classes=10",
                  "--input", "2x3x16x16:float32", "--report", "out.json", "--no-graph", cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout
    assert json.loads((tmp_path / "out.json").read_text())["ok"] is True


def test_cli_divergence_exit_1_writes_both_reports(tmp_path):
    ms_file = convert_model("convnet", tmp_path, edits=[("leaky", r"alpha=0\.01", "alpha=0.2")])
    res = run_cli("--torch", f"{MODELS}/convnet.py:ConvNet", "--ms", f"{ms_file}:ConvNet", "--input",
                  "2x3x16x16:float32", "--report", "r.json", "--report", "r.html", "--no-graph", cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "first divergent layer: leaky" in res.stdout and "Traceback" not in res.stderr
    assert json.loads((tmp_path / "r.json").read_text())["first_divergent"]["path"] == "leaky"
    assert "<svg" in (tmp_path / "r.html").read_text()


def test_cli_usage_error_exit_2(tmp_path):
    res = run_cli("--torch", f"{MODELS}/convnet.py:ConvNet", "--ms", "x.py:ConvNet", "--input", "2x3:floaty",
                  cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: --input '2x3:floaty'") and "Traceback" not in res.stderr


def test_cli_help_teaches():
    from click.testing import CliRunner

    from mindport.cli import main

    res = CliRunner().invoke(main, ["validate", "--help"])
    assert res.exit_code == 0
    assert "--ctor" in res.output and "2x16:int64:0:1000" in res.output and "Exit codes: 0 pass, 1 diverged" in res.output and "3 inconclusive" in res.output


def test_wrong_input_shape_is_an_input_error(tmp_path):
    ms_file = convert_model("convnet", tmp_path)
    with pytest.raises(InputError, match=r"reference model raised on the given inputs \(\(2, 3, 9, 9\):float32\)"):
        validate(f"{MODELS}/convnet.py:ConvNet", f"{ms_file}:ConvNet", inputs=["2x3x9x9:float32"])
    with pytest.raises(InputError, match="not a mindspore.nn.Cell"):
        validate(f"{MODELS}/convnet.py:ConvNet", f"{MODELS}/convnet.py:ConvNet", inputs=["1x3x16x16:float32"])


def test_missing_class_and_import_error(tmp_path):
    with pytest.raises(InputError, match="has no 'Nope'; it defines: .*ConvNet"):
        validate(f"{MODELS}/convnet.py:Nope", "x.py:Y", inputs=["1x3x16x16:float32"])
    broken = tmp_path / "broken.py"
    broken.write_text("import not_a_real_module_xyz\n")
    with pytest.raises(InputError, match="importing .*broken.py failed: ModuleNotFoundError"):
        validate(f"{MODELS}/convnet.py:ConvNet", f"{broken}:Net", inputs=["1x3x16x16:float32"])
    with pytest.raises(InputError, match="at least one input"):
        validate(f"{MODELS}/convnet.py:ConvNet", f"{broken}:Net", inputs=[])


def test_mindspore_model_that_raises_is_a_parity_failure(tmp_path):
    ms_file = convert_model("convnet", tmp_path)
    code = ms_file.read_text()
    old = "        x = self.ln(x)\n"
    ms_file.write_text(code.replace(old, old + "        x = x.reshape(5, -1)\n"))
    report = validate(f"{MODELS}/convnet.py:ConvNet", f"{ms_file}:ConvNet", inputs=["2x3x16x16:float32"])
    assert not report.ok and report.ms_error and report.outputs == []
    assert report.graph.status == "skipped"
    # every layer up to ln matched; the root's own code raised
    fd = report.first_divergent
    assert fd.path == "" and fd.status == "missing_in_mindspore" and "raised" in fd.cause


def test_npy_inputs(tmp_path):
    import numpy as np

    arr = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", arr)
    ms_file = convert_model("convnet", tmp_path)
    report = validate(f"{MODELS}/convnet.py:ConvNet", f"{ms_file}:ConvNet", inputs=[str(tmp_path / "x.npy")],
                      graph_mode=False, localize=False)
    assert report.ok and report.settings["inputs"][0]["shape"] == [1, 3, 16, 16]


def test_cli_graph_mode_failure_exits_1_unless_skipped(tmp_path):
    ms_file = convert_model("convnet", tmp_path)
    code = ms_file.read_text()
    old = "        x = self.ln(x)\n"
    ms_file.write_text(code.replace(old, "        try:\n            x = self.ln(x)\n        except ValueError:\n"
                                         "            x = x\n"))
    args = ("--torch", f"{MODELS}/convnet.py:ConvNet", "--ms", f"{ms_file}:ConvNet", "--input", "1x3x16x16:float32",
            "--no-localize")
    res = run_cli(*args, "--report", "r.json", cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    status = next(ln for ln in res.stdout.splitlines() if ln.startswith("graph mode:"))
    assert status.startswith(f"graph mode: failed at {ms_file}:") and "Unsupported statement 'Try'" in status
    assert "C++" not in res.stdout + res.stderr and "WARNING" not in res.stdout + res.stderr
    assert (tmp_path / "mindport-logs" / "mindspore.log").stat().st_size > 0  # MindSpore's own output went there
    assert not (tmp_path / "rank_0").exists()
    res = run_cli(*args, "--no-graph", cwd=tmp_path)
    assert res.returncode == 0 and "graph mode: skipped" in res.stdout, res.stdout + res.stderr
