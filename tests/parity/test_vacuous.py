"""A reference whose output is constant proves nothing when compared: the check says so, perturbs the parameters
that made it constant (seeded), compares again and decides on that."""
from __future__ import annotations

from parity_helpers import MODELS, convert_model
from mindport.validators.parity.compare import validate, write_reports

REF = f"{MODELS}/zerohead.py:ZeroHead"


def test_zero_output_model_is_warned_perturbed_and_then_proven(tmp_path):
    ms_file = convert_model("zerohead", tmp_path)
    report = validate(REF, f"{ms_file}:ZeroHead", inputs=["2x3x8x8:float32"], graph_mode=False)
    [out] = report.outputs
    assert out.constant and out.max_abs == 0  # the comparison of zeros ...
    v = report.vacuous
    assert v["constant_outputs"] == ["output"] and {"res", "out", ""} <= set(v["constant_layers"])
    # ... so the zero-initialised convolutions get seeded values, and the port is compared again
    assert v["perturbed_parameters"] == ["res.weight", "res.bias", "out.weight", "out.bias"]
    assert v["resolved"] and "constant" in v["note"]
    assert report.perturbed is not None and report.perturbed.ok
    assert not any(o.constant for o in report.perturbed.outputs) and report.perturbed.outputs[0].max_abs > 0
    assert report.ok
    assert any(d.code == "MP404" and d.severity == "warning" for d in report.diagnostics)
    html = write_reports(report, tmp_path / "r.html")[0].read_text()
    assert "Constant reference" in html and "res.weight" in html


def test_a_bug_hidden_by_zero_outputs_is_found_on_perturbed_weights(tmp_path):
    ms_file = convert_model("zerohead", tmp_path, edits=[("act", r"nn\.SiLU\(\)", "nn.Sigmoid()")])
    report = validate(REF, f"{ms_file}:ZeroHead", inputs=["2x3x8x8:float32"], graph_mode=False)
    # zeros on both sides: the outputs alone would have said parity
    assert all(o.allclose for o in report.outputs) and report.outputs[0].constant
    assert not report.ok
    sub = report.perturbed
    assert not sub.ok and not sub.outputs[0].allclose
    assert sub.first_divergent.path == "act" and sub.first_divergent.ms_type == "Sigmoid"
    # the unperturbed run located it too (a layer compares what the output hides)
    assert report.first_divergent.path == "act"


def test_no_perturbation_without_constant_outputs(tmp_path):
    ms_file = convert_model("mlp", tmp_path)
    report = validate(f"{MODELS}/mlp.py:MLP", f"{ms_file}:MLP", inputs=["3x6:float32"], graph_mode=False)
    assert report.ok and report.vacuous == {} and report.perturbed is None


def test_compare_leaves_the_callers_models_as_they_were(tmp_path):
    """In-process `compare` perturbs the caller's own models for the re-check: it gives their weights back."""
    import numpy as np

    from mindport.validators.parity.compare import compare
    from mindport.validators.parity.loading import build_model

    ms_file = convert_model("zerohead", tmp_path)
    torch_model, cell = build_model(REF), build_model(f"{ms_file}:ZeroHead")
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    report = compare(torch_model, cell, [x], graph_mode=False)
    assert report.ok and report.vacuous["perturbed_parameters"] and report.perturbed.ok
    assert not torch_model.out.weight.detach().numpy().any() and not cell.out.weight.asnumpy().any()
    assert np.array_equal(cell.conv1.weight.asnumpy(), torch_model.conv1.weight.detach().numpy())


def test_an_output_constant_by_construction_passes_once_re_checked(tmp_path):
    """Issue 28: every output and layer matched, but an auxiliary loss that is 0 in eval mode made the run a
    "DIVERGENCE" (MP404 error, exit 1) although nothing diverged. Re-checked on perturbed weights (every parameter:
    none is constant), it still matches: a pass."""
    from parity_helpers import run_cli

    ms_file = convert_model("auxloss", tmp_path)
    run = run_cli("--torch", f"{MODELS}/auxloss.py:AuxLoss", "--ms", f"{ms_file}:AuxLoss", "--input", "2x6:float32",
                  "--no-graph", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("PASS") and "verdict: PASS (exit code 0): every output and layer compared agrees; " \
        "constant output[1] re-checked on perturbed weights" in run.stdout
    assert "MP404" in run.stdout and "proj.weight, proj.bias" in run.stdout  # the code and what was perturbed


def test_a_constant_output_that_cannot_be_re_checked_is_inconclusive(tmp_path):
    from parity_helpers import run_cli

    ms_file = convert_model("auxloss", tmp_path)
    report = validate(f"{MODELS}/auxloss.py:Constant", f"{ms_file}:Constant", inputs=["2x6:float32"],
                      graph_mode=False)
    assert report.outcome == "inconclusive" and not report.ok and report.exit_code == 3
    assert report.reason == "output constant and not re-checked on perturbed weights: comparing constants proves " \
                            "little"
    import subprocess
    import sys

    from parity_helpers import cli_env

    temp = tmp_path / "temp"  # the system temp dir of this run: a run that did not pass left its logs there
    temp.mkdir()
    run = subprocess.run([sys.executable, "-m", "mindport.cli", "validate", "--torch", f"{MODELS}/auxloss.py:Constant",
                          "--ms", f"{ms_file}:Constant", "--input", "2x6:float32", "--no-graph"],
                         capture_output=True, text=True, cwd=tmp_path, env={**cli_env(), "TMPDIR": str(temp)})
    assert run.returncode == 3, run.stdout + run.stderr
    assert list(temp.iterdir()) == []  # no mindport-validate-* folder left behind (--log-dir keeps logs)
    assert run.stdout.startswith("INCONCLUSIVE") and "verdict: INCONCLUSIVE (exit code 3)" in run.stdout
    assert "MP404 the reference's output is constant and cannot be re-checked on perturbed weights (the " \
           "reference has no parameter mindport can perturb): inconclusive" in run.stdout


def test_a_constant_output_of_a_model_without_weights_is_re_checked_on_other_inputs(tmp_path):
    """pytorch-flows' Shuffle (the discovery sweep, rows 117 on): a permutation and a zero log-determinant, no
    parameter and only an integer buffer (the permutation). Nothing can be perturbed, so it was "inconclusive" (a diverged model in the sweep); the
    zero is the model's own constant: compared again on a second input draw, where the permutation changes and the
    zero does not, it passes."""
    ms_file = convert_model("auxloss", tmp_path)
    report = validate(f"{MODELS}/auxloss.py:Permute", f"{ms_file}:Permute", inputs=["2x6:float32"], graph_mode=False)
    v = report.vacuous
    assert v["constant_outputs"] == ["output[1]"] and v["perturbed_parameters"] == [] and v["perturbed_inputs"]
    assert v["resolved"] and "second input draw: they match; output[1] constant on it too" in v["note"]
    sub = report.perturbed
    assert sub is not None and sub.ok and not sub.outputs[0].constant
    assert report.ok and report.outcome == "pass" and "re-checked on a second input draw" in report.reason
