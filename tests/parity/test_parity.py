"""Correct ports pass; outputs of any nesting are matched by key; NaN/Inf placement is compared."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parity_helpers import MODELS, convert_model
from mindport.validators.parity.compare import compare, validate
from mindport.validators.parity.metrics import compare_arrays, flatten_outputs


def test_convnet_port_has_parity_in_pynative_and_graph_mode(converted_dir):
    ms_file = convert_model("convnet", converted_dir)
    report = validate(f"{MODELS}/convnet.py:ConvNet", f"{ms_file}:ConvNet", ctor="num_classes=7",
                      inputs=["2x3x16x16:float32"])
    assert report.ok, report.to_json()
    [out] = report.outputs
    assert out.key == "output" and out.ref_shape == [2, 7] and out.allclose
    assert out.max_abs < 1e-5 and out.cosine > 0.999999
    assert report.first_divergent is None and report.config_findings == []
    assert [lr.path for lr in report.layers] == ["conv1", "bn1", "act", "pool", "conv2", "avg", "leaky", "ln",
                                                 "drop", "fc", ""]
    assert {lr.status for lr in report.layers} == {"match"}
    assert report.weights["transferred"] == 12 and report.weights["ok"]
    assert report.graph.status == "ok" and report.graph.compiled and report.graph.equal_to_pynative


def test_factory_function_config_ctor_and_integer_inputs(converted_dir):
    ms_file = convert_model("tokennet", converted_dir)
    report = validate(f"{MODELS}/tokennet.py:tiny_lm", f"{ms_file}:tiny_lm", ctor="Config(dim=16)",
                      inputs=["2x5:int64:0:100"], graph_mode=False)
    assert report.ok, report.to_json()
    assert report.outputs[0].ref_shape == [2, 5, 100]
    assert report.settings["inputs"][0]["spec"] == "2x5:int64:0:100"
    paths = [lr.path for lr in report.layers]
    assert paths[:4] == ["embed", "blocks.0", "blocks.1", "blocks.2"]


def test_nested_outputs_are_matched_by_key(converted_dir):
    ms_file = convert_model("nested", converted_dir)
    report = validate(f"{MODELS}/nested.py:Nested", f"{ms_file}:Nested", inputs=["3x8:float32", "3:int32:0:5"])
    assert report.ok, report.to_json()
    keys = [o.key for o in report.outputs]
    assert keys == ["output['logits']", "output['pair'][0]", "output['pair'][1]", "output['both'][0]",
                    "output['both'][1]", "output['extra'].score", "output['extra'].count"]
    int_out = report.outputs[4]
    assert int_out.rtol == 0 and int_out.atol == 0  # integers compare exactly


def test_structure_mismatch_is_reported(converted_dir, tmp_path):
    ms_file = convert_model("nested", tmp_path)
    code = ms_file.read_text().replace('"both": (h * 2, y + 1)', '"twice": (h * 2, y + 1)')
    ms_file.write_text(code)
    report = validate(f"{MODELS}/nested.py:Nested", f"{ms_file}:Nested", inputs=["3x8:float32", "3:int32:0:5"],
                      graph_mode=False, localize=False)
    assert not report.ok
    assert not report.structure["ok"]
    status = {o.key: o.status for o in report.outputs}
    assert status["output['both'][0]"] == "missing_in_mindspore"
    assert status["output['twice'][0]"] == "missing_in_reference"
    assert any(d.code == "MP402" for d in report.diagnostics)


def test_flatten_kinds():
    from collections import namedtuple

    point = namedtuple("P", "x y")(np.zeros(1), np.ones(1))
    kinds = {}
    flat = flatten_outputs({"a": [point, None]}, kinds=kinds)
    assert [k for k, _ in flat] == ["output['a'][0][0]", "output['a'][0][1]", "output['a'][1]"]
    assert kinds == {"output": "mapping", "output['a']": "sequence", "output['a'][0]": "sequence"}


def test_nan_and_inf_placement_is_never_hidden_by_tolerance():
    ref = np.array([np.nan, 1.0, np.inf, 2.0], np.float32)
    same = compare_arrays("o", ref, ref.copy(), rtol=1e-5, atol=1e-6)
    assert same.allclose and same.nonfinite["ref"] == {"nan": 1, "inf": 1}
    moved = compare_arrays("o", ref, np.array([1.0, np.nan, np.inf, 2.0], np.float32), rtol=1e9, atol=1e9)
    assert not moved.allclose and "placement" in moved.message
    sign = compare_arrays("o", ref, np.array([np.nan, 1.0, -np.inf, 2.0], np.float32), rtol=1e9, atol=1e9)
    assert not sign.allclose
    half = compare_arrays("o", np.float16([1.0]), np.float16([1.0005]), rtol=1e-5, atol=1e-6)
    assert half.allclose and half.rtol == 1e-3  # dtype-aware tolerance floor


def test_nan_outputs_of_real_models():
    import mindspore as ms
    import torch

    class TorchLog(torch.nn.Module):
        def forward(self, x):
            return torch.log(x)

    class MsLog(ms.nn.Cell):
        def construct(self, x):
            return ms.ops.log(x)

    class MsLogClamped(ms.nn.Cell):
        def construct(self, x):
            return ms.ops.log(ms.ops.abs(x))

    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    same = compare(TorchLog(), MsLog(), [x], graph_mode=False)
    assert same.ok and same.outputs[0].nonfinite["ref"]["nan"] == int((x < 0).sum()) > 0
    moved = compare(TorchLog(), MsLogClamped(), [x], graph_mode=False)
    assert not moved.ok and "NaN/Inf placement differs" in moved.outputs[0].message
    # the root module is the first (and only) divergent layer
    assert moved.first_divergent is not None and moved.first_divergent.path == ""


def test_graph_mode_failure_is_located(tmp_path, monkeypatch):
    ms_file = convert_model("convnet", tmp_path)
    code = ms_file.read_text()
    old = "        x = self.ln(x)\n"
    assert old in code
    ms_file.write_text(code.replace(old, "        try:\n            x = self.ln(x)\n        except ValueError:\n"
                                         "            x = x\n"))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    report = validate(f"{MODELS}/convnet.py:ConvNet", f"{ms_file}:ConvNet", inputs=["1x3x16x16:float32"],
                      localize=False, log_dir=tmp_path / "logs")  # kept when asked (a temporary one is removed)
    assert report.graph.status == "failed" and not report.graph.compiled
    assert "Try" in report.graph.error and "C++ Call Stack" not in report.graph.error
    assert report.graph.location.startswith(str(ms_file))
    # PyNative parity holds, but a port that does not compile in GRAPH_MODE fails (--no-graph skips the check)
    assert all(o.allclose for o in report.outputs)
    assert not report.ok
    assert any(d.code == "MP403" and d.severity == "error" for d in report.diagnostics)
    # MindSpore's analyze_fail.ir and logs go to the run's log folder, never into the working directory
    assert list(cwd.iterdir()) == []
    logs = Path(report.logs["folder"])
    assert logs == tmp_path / "logs" and (logs / "mindspore.log").is_file() and list(logs.rglob("analyze_fail*.ir"))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_onnx_reference_with_initializers_as_weights(tmp_path):
    import torch

    import importlib.util

    spec = importlib.util.spec_from_file_location("upnet_ref", MODELS / "upnet.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.UpNet().eval()
    onnx_path = tmp_path / "upnet.onnx"
    torch.onnx.export(model, (torch.randn(1, 3, 8, 8),), str(onnx_path), dynamo=False, input_names=["x"])
    ms_file = convert_model("upnet", tmp_path)
    report = validate(str(onnx_path), f"{ms_file}:UpNet", inputs=["1x3x8x8:float32"], graph_mode=False)
    assert report.reference["kind"] == "onnx"
    assert report.weights["source"] == "onnx initializers" and report.weights["transferred"] == 4
    assert report.ok, report.to_json()
    assert report.outputs[0].ref_shape == [1, 4, 16, 16]
    assert "ONNX" in report.localization
    # the ONNX reference also catches a trap (without localisation)
    trap = convert_model("upnet", tmp_path, edits=[("up", "align_corners=True", "align_corners=False")],
                         suffix="trap")
    bad = validate(str(onnx_path), f"{trap}:UpNet", inputs=["1x3x8x8:float32"], graph_mode=False)
    assert not bad.ok and bad.outputs[0].status == "mismatch"


@pytest.mark.parametrize("as_array", [True, False])
def test_compare_accepts_arrays_and_transfers_weights(as_array):
    import mindspore as ms
    import torch

    torch.manual_seed(1)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 3), torch.nn.Tanh())
    cell = ms.nn.SequentialCell(ms.nn.Dense(6, 3), ms.nn.Tanh())
    x = np.random.default_rng(1).standard_normal((2, 6)).astype(np.float32)
    report = compare(tm, cell, x if as_array else [x], graph_mode=False)
    assert report.ok and report.weights["transferred"] == 2
    assert [lr.path for lr in report.layers] == ["0", "1", ""]
