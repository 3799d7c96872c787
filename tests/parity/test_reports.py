"""The JSON report follows the documented schema; the HTML report is one self-contained file with an SVG plot."""
from __future__ import annotations

import json
import re

import pytest

from parity_helpers import MODELS, REPO, convert_model
from mindport.validators.parity.compare import validate, write_reports
from mindport.validators.parity.results import SCHEMA_VERSION


@pytest.fixture(scope="module")
def trap_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    ms_file = convert_model("convnet", out, edits=[("act", "approximate=False", "approximate=True")])
    report = validate(f"{MODELS}/convnet.py:ConvNet", f"{ms_file}:ConvNet", inputs=["2x3x16x16:float32"])
    paths = write_reports(report, [out / "r.json", out / "sub" / "r.html"])
    return report, paths


def test_json_schema(trap_report):
    report, (json_path, _) = trap_report
    data = json.loads(json_path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert set(data) == {"schema_version", "tool", "ok", "verdict", "reason", "reference", "candidate", "settings", "weights",
                         "structure", "outputs", "layers", "first_divergent", "drift", "config_findings", "vacuous",
                         "perturbed", "grad", "train", "graph", "ms_error", "ms_error_site", "localization", "logs", "diagnostics",
                         "timings"}
    assert data["vacuous"] == {} and data["perturbed"] is None and data["grad"] is None and data["train"] is None
    assert data["ok"] is False and data["verdict"] == "diverged"
    # the output differs, and the static setting behind it fails the proof on its own (issue 29): both are the reason
    assert data["reason"] == f"output differs; a layer setting differs (act: {data['config_findings'][0]['cause']})"
    assert data["config_findings"][0]["trap"] == "gelu_approximate" and len(data["config_findings"]) == 1
    assert data["settings"]["rtol"] == 1e-5 and data["settings"]["inputs"][0]["spec"] == "2x3x16x16:float32"
    out = data["outputs"][0]
    assert {"key", "status", "ref_shape", "ms_shape", "max_abs", "max_rel", "mean_abs", "cosine", "allclose",
            "rtol", "atol", "nonfinite", "ratio_1e3", "ratio_5e3", "grade", "constant"} <= set(out)
    assert out["grade"] in ("pass", "warning", "error") and 0 <= out["ratio_1e3"] <= out["ratio_5e3"] <= 1
    fd = data["first_divergent"]
    assert fd["path"] == "act" and fd["causes"][0]["trap"] == "gelu_approximate"
    assert fd["role"] == "cause" and fd["input_max_rel"] is not None and fd["grade"] in ("pass", "warning", "error")
    # the statement that called the layer, on both sides
    assert fd["ms_site"].endswith(".py:" + fd["ms_site"].rsplit(":", 1)[1]) and "_ms.py:" in fd["ms_site"]
    assert fd["torch_site"].startswith(str(MODELS / "convnet.py") + ":")
    assert fd["torch_config"]["approximate"] == "none" and fd["ms_config"]["approximate"] is True
    assert [lr["index"] for lr in data["layers"]] == list(range(len(data["layers"])))
    assert data["graph"]["status"] == "ok"
    assert all({"code", "message", "severity"} <= set(d) for d in data["diagnostics"])


def test_schema_is_documented():
    doc = (REPO / "docs" / "parity-report.md").read_text()
    assert f"schema_version` is `{SCHEMA_VERSION}`" in doc
    for key in ("first_divergent", "config_findings", "nonfinite", "equal_to_pynative", "training_only",
                "localization", "ms_error", "ms_error_site", "max_rel", "ref_scale", "ratio_1e3", "ratio_5e3", "grade", "role",
                "input_max_rel", "ms_site", "torch_site", "ms_diagnostics", "drift", "vacuous", "perturbed",
                "perturbed_parameters", "grad", "sign_similarity", "train", "rel_diff", "first_divergent_step",
                "logs", "constant"):
        assert f"`{key}`" in doc, key


def test_html_is_one_self_contained_file_with_a_plot(trap_report):
    report, (_, html_path) = trap_report
    html = html_path.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert html.count("<svg") == 1 and "</svg>" in html
    assert "<script" not in html and "<link" not in html and not re.search(r"""(src|href)=["']?https?:""", html)
    assert "DIVERGED" in html and "GELU approximation differs" in html
    assert html.count('class="first"') == 1  # the first divergent layer row is highlighted


def test_bad_report_suffix(trap_report, tmp_path):
    from mindport.errors import InputError

    with pytest.raises(InputError, match="suffix"):
        write_reports(trap_report[0], [tmp_path / "r.txt"])


def test_terminal_report_names_layer_and_cause(trap_report):
    from rich.console import Console

    from mindport.validators.parity.report import print_report

    console = Console(record=True, width=200)
    print_report(trap_report[0], console)
    text = console.export_text()
    assert "DIVERGED" in text and "first divergent layer: act (GELU -> GELU)" in text
    assert "likely cause: GELU approximation differs" in text and "graph mode: ok" in text
