"""Render the scripts and run them for real: two training steps and one evaluation on synthetic data.

Six subprocess runs in total (each imports mindspore, a few seconds each).
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from mindport.templates import render_scripts

FIXTURES = Path(__file__).parent / "fixtures"
LOSS_FUNCTIONAL = re.compile(r"^epoch (\d+) step (\d+) loss (\S+)$", re.M)
LOSS_MODEL = re.compile(r"^epoch: (\d+) step: (\d+), loss is (\S+)$", re.M)


def run(script: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, str(script), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"{script.name} {args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc


def project(tmp_path: Path, *fixtures: str) -> Path:
    out = tmp_path / "proj"
    (out / "models").mkdir(parents=True)
    for name in fixtures:
        shutil.copy(FIXTURES / name, out / "models" / name)
    return out


def test_functional_jit_train_then_eval_from_rendered_checkpoint(tmp_path):
    out = project(tmp_path, "convnet.py")
    render_scripts(out, "models/convnet.py", "ConvNet", ctor="num_classes=10", input_spec="2x3x32x32:float32")
    proc = run(out / "train.py", "--steps", "2", "--jit", cwd=out)
    losses = LOSS_FUNCTIONAL.findall(proc.stdout)
    assert [(e, s) for e, s, _ in losses] == [("1", "1"), ("1", "2")]
    assert all(math.isfinite(float(v)) for _, _, v in losses)
    ckpt = out / "checkpoints" / "convnet-1_2.ckpt"
    assert ckpt.is_file()

    # A second project whose scripts start from that checkpoint (as `migrate` does with converted weights).
    evaluated = project(tmp_path / "second", "convnet.py")
    render_scripts(evaluated, "models/convnet.py", "ConvNet", ctor="num_classes=10", num_classes=10, checkpoint=ckpt)
    rng = np.random.default_rng(3)
    np.savez(
        evaluated / "test.npz",
        x=rng.standard_normal((5, 3, 32, 32)).astype(np.float32),
        y=rng.integers(0, 10, size=5),  # int64 on disk: the pipeline casts labels to int32
    )
    proc = run(
        evaluated / "eval.py", "--data", "test.npz", "--batch-size", "2", "--metrics-json", "m.json", cwd=evaluated
    )
    assert f"loaded {ckpt}" in proc.stdout
    for label in ("accuracy:", "precision (macro):", "recall (macro):", "error_rate:", "confusion matrix"):
        assert label in proc.stdout
    report = json.loads((evaluated / "m.json").read_text())
    matrix = np.array(report["confusion_matrix"])
    assert matrix.shape == (10, 10)
    assert matrix.sum() == 5  # batch 2 over 5 samples: the last partial batch is kept
    assert report["accuracy"] == np.trace(matrix) / 5
    assert math.isclose(report["error_rate"], 1 - report["accuracy"])
    assert len(report["precision_per_class"]) == len(report["recall_per_class"]) == 10


def test_model_api_checkpoint_callback_and_amp_level(tmp_path):
    out = project(tmp_path, "convnet.py")
    render_scripts(out, "models/convnet.py", "ConvNet", ctor="num_classes=10", optimizer="sgd", api="model", lr=0.01)
    train_py = (out / "train.py").read_text()
    assert "amp_level=args.amp" in train_py
    proc = run(
        out / "train.py", "--steps", "2", "--amp", "O2", "--save-steps", "1", "--keep-ckpt", "1",
        "--ckpt-prefix", "net", cwd=out,
    )
    losses = LOSS_MODEL.findall(proc.stdout)
    assert [(e, s) for e, s, _ in losses] == [("1", "1"), ("1", "2")]
    assert all(math.isfinite(float(v)) for _, _, v in losses)
    # ModelCheckpoint saved after step 1 and step 2; keep_checkpoint_max=1 pruned the first one.
    assert sorted(p.name for p in (out / "checkpoints").glob("*.ckpt")) == ["net-1_2.ckpt"]


def test_user_dataset_factory_function_train_then_eval_newest_checkpoint(tmp_path):
    out = project(tmp_path, "mlp.py", "blobs.py")
    render_scripts(
        out, "models/mlp.py", "make_mlp", ctor="num_classes=4", input_spec="4x16:float32", optimizer="adam",
        dataset="models/blobs.py:Blobs", dataset_ctor="split=split, num_samples=24",
    )
    proc = run(out / "train.py", "--epochs", "2", "--steps", "2", "--amp", "O1", "--lr", "0.01", cwd=out)
    losses = LOSS_FUNCTIONAL.findall(proc.stdout)
    assert [(e, s) for e, s, _ in losses] == [("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")]
    assert all(math.isfinite(float(v)) for _, _, v in losses)
    assert {p.name for p in (out / "checkpoints").glob("*.ckpt")} == {"make_mlp-1_2.ckpt", "make_mlp-2_2.ckpt"}

    proc = run(out / "eval.py", "--metrics-json", "m.json", cwd=out)
    assert "make_mlp-2_2.ckpt" in proc.stdout.splitlines()[0]  # the newest checkpoint
    report = json.loads((out / "m.json").read_text())
    matrix = np.array(report["confusion_matrix"])
    assert matrix.shape == (4, 4) and matrix.sum() == 24  # 4 classes inferred from the logits, every sample
    assert 0.0 <= report["precision"] <= 1.0 and 0.0 <= report["recall"] <= 1.0
    assert math.isclose(report["error_rate"], 1 - report["accuracy"])


def test_two_inputs_model_api_with_adamw_train_step(tmp_path):
    out = project(tmp_path, "twoinput.py")
    render_scripts(
        out, "models/twoinput.py", "TwoInputNet", ctor="num_classes=3",
        input_spec=["3x1x8x8:float32", "3x5:float32:-1:1"], api="model",
    )
    assert "('x1', (5,), 'float32', (-1.0, 1.0))" in (out / "data_pipeline.py").read_text()
    train_py = (out / "train.py").read_text()
    assert "nn.TrainOneStepCell(NetWithLoss(net, loss_fn), optimizer)" in train_py
    # Model gets a finished train step, so mixed precision comes from auto_mixed_precision alone.
    assert "model = Model(train_net)" in train_py and "Model(net" not in train_py
    proc = run(out / "train.py", "--steps", "2", "--amp", "O1", cwd=out)
    losses = LOSS_MODEL.findall(proc.stdout)
    assert len(losses) == 2 and all(math.isfinite(float(v)) for _, _, v in losses)
    assert [p.name for p in (out / "checkpoints").glob("*.ckpt")] == ["twoinputnet-1_2.ckpt"]


def test_amp_o1_rewrite_failure_is_said_plainly_and_the_real_path_trains(tmp_path):
    # MindSpore 2.10's O1 rewrite copies ops.concat's implementation into rewritten_network/ and imports it back;
    # through a symlinked path to the environment it writes a relative import there that cannot load.
    out = project(tmp_path, "concatnet.py")
    render_scripts(out, "models/concatnet.py", "ConcatNet", ctor="num_classes=3", input_spec="4x6:float32")
    real_env = Path(os.path.realpath(sys.prefix))
    linked_env = tmp_path / "linked-env"
    linked_env.symlink_to(real_env, target_is_directory=True)

    trained = subprocess.run(
        [str(real_env / "bin" / "python"), "train.py", "--steps", "2", "--amp", "O1"],
        cwd=out, capture_output=True, text=True, timeout=300,
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    losses = LOSS_FUNCTIONAL.findall(trained.stdout)
    assert len(losses) == 2 and all(math.isfinite(float(v)) for _, _, v in losses)

    shutil.rmtree(out / "rewritten_network", ignore_errors=True)
    linked = subprocess.run(
        [str(linked_env / "bin" / "python"), "train.py", "--steps", "2", "--amp", "O1"],
        cwd=out, capture_output=True, text=True, timeout=300,
    )
    assert linked.returncode == 1
    assert "--amp O1: MindSpore's mixed-precision rewrite could not import" in linked.stderr
    assert "Traceback" not in linked.stderr
