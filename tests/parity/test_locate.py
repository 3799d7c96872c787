"""Where it failed: the statement on both sides and the `# mindport:` comment on it; a layer is blamed only when its
inputs agree and its output does not (msprobe's rule), so drift that accumulates through a network blames nobody;
msprobe's metrics and grades."""
from __future__ import annotations

import numpy as np
import pytest

from parity_helpers import MODELS, convert_model
from mindport.validators.parity.compare import validate
from mindport.validators.parity.localize import statement_at
from mindport.validators.parity.metrics import error_ratios, grade, sign_similarity


def test_the_raising_statement_and_its_mindport_comment_are_named(tmp_path):
    ms_file = convert_model("flagged", tmp_path)
    lines = ms_file.read_text().splitlines()
    flagged = next(i + 1 for i, ln in enumerate(lines) if "# mindport: MP102" in ln)
    report = validate(f"{MODELS}/flagged.py:Flagged", f"{ms_file}:Flagged", inputs=["2x6:float32"])
    assert not report.ok and report.ms_error
    fd = report.first_divergent
    assert fd.ms_site == f"{ms_file}:{flagged}"
    assert len(fd.ms_diagnostics) == 1 and fd.ms_diagnostics[0].startswith("mindport: MP102 torch.cdist")
    diag = next(d for d in report.diagnostics if d.message.startswith("first divergent layer"))
    assert (diag.file, diag.line) == (str(ms_file), flagged)


def test_a_layer_is_named_with_its_statement_on_both_sides(tmp_path):
    ms_file = convert_model("convnet", tmp_path, edits=[("leaky", r"alpha=0\.01", "alpha=0.2")])
    report = validate(f"{MODELS}/convnet.py:ConvNet", f"{ms_file}:ConvNet", inputs=["2x3x16x16:float32"],
                      graph_mode=False)
    fd = report.first_divergent
    assert fd.path == "leaky" and fd.role == "cause" and fd.input_max_rel < 1e-6
    for site, source in ((fd.ms_site, ms_file), (fd.torch_site, MODELS / "convnet.py")):
        path, _, line = site.rpartition(":")
        assert path == str(source)
        assert "self.leaky(self.avg(self.conv2(x)))" in source.read_text().splitlines()[int(line) - 1]
    # the layers after it only carry its error on
    later = [lr for lr in report.layers[fd.index + 1:] if lr.diverged]
    assert later and {lr.role for lr in later} <= {"propagated", "contains"}


def test_accumulated_drift_blames_no_layer(tmp_path):
    """Every converted block scales its output by 1 + 4e-6: no block is wrong by much, the error grows by a little
    at each; the outputs exceed rtol=1e-5 after a few blocks."""
    ms_file = convert_model("deep", tmp_path)
    code = ms_file.read_text()
    old = "return x + 0.1 * _precise_tanh(self.fc(x))"  # torch.tanh: MindSpore's CPU tanh is off by 1e-4
    assert old in code
    ms_file.write_text(code.replace(old, "return (x + 0.1 * _precise_tanh(self.fc(x))) * 1.000004"))
    report = validate(f"{MODELS}/deep.py:Deep", f"{ms_file}:Deep", inputs=["4x8:float32"], graph_mode=False)
    assert not report.ok and not report.outputs[0].allclose
    assert report.first_divergent is None
    assert report.drift.startswith("accumulated drift")
    blocks = [lr for lr in report.layers if lr.path.startswith("blocks.") and lr.path.count(".") == 1]
    assert blocks[0].status == "match" and blocks[-1].status == "diverged"
    assert all(lr.role in ("", "propagated") for lr in report.layers)
    assert {lr.grade for lr in report.layers} == {"pass"}  # msprobe would not flag a single layer either


def test_statement_at_spans_a_multiline_statement(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(x):\n    y = g(x,  # mindport: MP104 kept\n          x)\n    return y  # plain\n")
    assert statement_at(f"{src}:3") == ("x)", ["mindport: MP104 kept"])
    assert statement_at(f"{src}:4") == ("return y  # plain", [])


@pytest.mark.parametrize(("out", "inp", "expected"), [
    ({"cosine": 0.995, "max_abs": 0.002, "ratio_1e3": 0.9}, None, "pass"),  # cosine above 0.99
    ({"cosine": 0.98, "max_abs": 0.0005, "ratio_1e3": 0.9}, None, "pass"),  # max abs below 1e-3
    ({"cosine": 0.98, "max_abs": 0.002, "ratio_1e3": 0.9}, None, "error"),  # both missed
    ({"cosine": 0.89, "max_abs": 1e-4, "ratio_1e3": 0.9}, None, "error"),  # cosine below 0.9
    ({"cosine": 0.999, "max_abs": 1.5, "ratio_1e3": 0.9}, None, "error"),  # max abs above 1
    ({"cosine": 1.0, "max_abs": 0.0, "ratio_1e3": 1.0, "nan_ok": False}, None, "error"),
    ({"cosine": 0.999, "max_abs": 1e-4, "ratio_1e3": 0.5}, {"cosine": 1.0, "max_abs": 0.0, "ratio_1e3": 0.95},
     "error"),  # red: inputs' 0.1 % ratio above 0.9, the output's below 0.6
    ({"cosine": 0.999, "max_abs": 1e-4, "ratio_1e3": 0.8}, {"cosine": 1.0, "max_abs": 0.0, "ratio_1e3": 0.95},
     "warning"),  # yellow: the ratio drops by more than 0.1
])
def test_msprobe_grades(out, inp, expected):
    assert grade(out, inp)[0] == expected


def test_msprobe_yellow_rules_are_listed_beside_the_red_ones():
    # a cosine drop above 0.1 from cosine 1 lands below the 0.9 floor: an error, with both reasons given
    level, reasons = grade({"cosine": 0.85, "max_abs": 1e-4, "ratio_1e3": 0.9}, {"cosine": 1.0, "max_abs": 0.0,
                                                                                  "ratio_1e3": 0.9})
    assert level == "error" and any("cosine drops" in r for r in reasons)
    level, reasons = grade({"cosine": 0.999, "max_abs": 30.0, "ratio_1e3": 0.9}, {"cosine": 1.0, "max_abs": 2.0,
                                                                                   "ratio_1e3": 0.9})
    assert level == "error" and any("order of magnitude" in r for r in reasons)


def test_msprobe_ratios_and_sign_similarity():
    ref = np.array([1.0, 2.0, 0.0, 4.0])
    got = np.array([1.0005, 2.006, 0.0, 4.1])  # relative errors 5e-4, 3e-3, 0, 2.5e-2
    assert error_ratios(ref, got) == (0.5, 0.75)
    assert sign_similarity(np.array([1.0, -1.0, 1e-9, 2.0]), np.array([1.0, 1.0, -1e-9, 2.0]), tol=1e-6) == 0.75
    assert sign_similarity(np.array([1e-9]), np.array([-1e-9])) == 0.0  # no tolerance: signs compared as they are


def test_an_in_place_layers_inputs_are_read_before_it_runs():
    """torch's ReLU(inplace=True) rewrites its input: read after it returned, its inputs would look diverged."""
    import mindspore as ms
    import torch

    from mindport.validators.parity.compare import compare

    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(inplace=True), torch.nn.Linear(8, 3))
    cell = ms.nn.SequentialCell(ms.nn.Dense(6, 8), ms.nn.ReLU(), ms.nn.Dense(8, 3))
    x = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    report = compare(tm, cell, [x], graph_mode=False)
    assert report.ok
    relu = next(lr for lr in report.layers if lr.path == "1")
    assert relu.input_max_rel < 1e-6 and relu.input_cosine > 0.999999
