"""`mindport export`: MindIR written with mindspore.export, loaded back with mindspore.load + nn.GraphCell, and its
outputs compared with the Cell's; also the last step of `mindport migrate` (tests/test_migrate.py)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from mindport.errors import InputError
from mindport.migrator.repo import convert_path

CLI = [sys.executable, "-m", "mindport.cli"]
TORCH_MODEL = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 6 * 6, hidden)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(torch.flatten(x, 1)).softmax(dim=-1)
"""
NOT_A_GRAPH = """import mindspore as ms
from mindspore import nn


class Net(nn.Cell):
    def construct(self, x):
        return ms.Tensor(x.asnumpy() * 2)  # numpy in construct: graph mode cannot compile it
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    (root / "src").mkdir()
    (root / "src" / "model.py").write_text(TORCH_MODEL)
    report = convert_path(root / "src", root / "ms", jobs=1)
    assert report.ok, [d.format() for d in report.diagnostics]
    return root


def test_export_writes_mindir_that_reloads_to_the_cells_outputs(converted, tmp_path):
    out = tmp_path / "net.mindir"
    run = subprocess.run([*CLI, "export", "--model", f"{converted}/ms/model.py:Net", "--ctor", "hidden=5",
                          "--input", "2x3x6x6:float32", "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "outputs match the Cell" in run.stdout and out.is_file()
    # loaded again here, independently of mindport: a graph of the model's function (its weights are the
    # subprocess's random init; the test below compares values with known weights)
    import mindspore as ms
    from mindspore import nn

    x = ms.Tensor(np.random.default_rng(3).standard_normal((2, 3, 6, 6)).astype(np.float32))
    y = nn.GraphCell(ms.load(str(out)))(x).asnumpy()
    assert y.shape == (2, 5)
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=1e-5)  # softmax rows


def test_export_with_a_checkpoint_uses_its_weights(converted, tmp_path):
    import mindspore as ms
    from mindspore import nn

    from mindport.migrator.weights import save_weights
    from mindport.validators.parity.loading import build_model

    trained = build_model(f"{converted}/ms/model.py:Net", "")
    for param in trained.get_parameters():
        param.set_data(ms.Tensor(np.full(param.shape, 0.01, np.float32)))
    ckpt = tmp_path / "net.ckpt"
    save_weights(trained, ckpt)
    out = tmp_path / "net.mindir"
    run = subprocess.run([*CLI, "export", "--model", f"{converted}/ms/model.py:Net", "--input", "1x3x6x6:float32",
                          "--checkpoint", str(ckpt), "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    trained.set_train(False)
    x = ms.Tensor(np.ones((1, 3, 6, 6), np.float32))
    np.testing.assert_allclose(nn.GraphCell(ms.load(str(out)))(x).asnumpy(), trained(x).asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_a_model_graph_mode_cannot_compile_is_reported_not_written(tmp_path):
    (tmp_path / "model.py").write_text(NOT_A_GRAPH)
    out = tmp_path / "net.mindir"
    run = subprocess.run([*CLI, "export", "--model", f"{tmp_path}/model.py:Net", "--input", "2x3:float32",
                          "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "MindIR export failed" in run.stdout and "Traceback" not in run.stdout + run.stderr
    assert not out.exists() and not list(tmp_path.glob("*.mindir"))  # nothing half-written


@pytest.mark.parametrize(("args", "message"), [
    (["-o", "net.onnx", "--input", "2x3:float32"], "must end with .mindir"),
    (["-o", "net.mindir", "--input", "2x3:complex"], "expected SHAPE:DTYPE"),
    (["-o", "net.mindir", "--input", "2x3:float32", "--checkpoint", "missing.ckpt"], "does not exist"),
])
def test_input_errors_exit_2(tmp_path, args, message):
    (tmp_path / "model.py").write_text(NOT_A_GRAPH)
    run = subprocess.run([*CLI, "export", "--model", "model.py:Net", *args], capture_output=True, text=True,
                         cwd=tmp_path)
    assert run.returncode == 2 and message in run.stderr, run.stderr


def test_an_existing_output_needs_force(tmp_path):
    (tmp_path / "model.py").write_text(NOT_A_GRAPH)
    (tmp_path / "net.mindir").write_bytes(b"keep")
    run = subprocess.run([*CLI, "export", "--model", "model.py:Net", "--input", "2x3:float32", "-o", "net.mindir"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and "--force" in run.stderr
    assert (tmp_path / "net.mindir").read_bytes() == b"keep"


def test_the_report_serialises(converted, tmp_path):
    from mindport.export import export_mindir

    report = export_mindir(f"{converted}/ms/model.py:Net", tmp_path / "n.mindir", inputs=["1x3x6x6:float32"])
    data = json.loads(json.dumps(report.to_json()))
    assert data["ok"] and data["bytes"] > 0 and data["outputs"][0]["allclose"]
    with pytest.raises(InputError, match="needs the model's inputs"):
        export_mindir(f"{converted}/ms/model.py:Net", tmp_path / "m.mindir")
