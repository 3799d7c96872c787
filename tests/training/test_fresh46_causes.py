"""Causes found by the training corpus's first contact with four more repositories (benchmarks/training/fresh46.json):
one test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from test_fresh18_causes import _run_in_folder


def _convert_and_run(tmp_path, source):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(source)
    convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    return _run_in_folder(src), _run_in_folder(out), code


# TingsongYu/PyTorch-Tutorial-2nd's chapter-5/03_lr_scheduler_plot.py shows LambdaLR on an SGD over two param groups
# of plain tensors (``torch.randn((6, 3, 5, 5))``, ``torch.ones((5, 5))``: no requires_grad). torch takes any leaf
# tensor (one without a grad is never updated); a MindSpore optimizer holds only Parameters, and the port stopped
# there (TypeError from MindSpore's own message: can only concatenate str (not "_TensorMeta") to str). The plain
# tensors an optimizer is given (a list or param groups built in the call) now become Parameters that need no grad
# (mindport.runtime.optim.distinct_names): the schedulers and param groups work on them as in torch, no step moves them.
PLAIN_TENSORS = '''
import torch
import torch.optim as optim

weights_1 = torch.randn((6, 3, 5, 5))
weights_2 = torch.ones((5, 5))
optimizer = optim.SGD([{'params': [weights_1]}, {'params': [weights_2]}], lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=[lambda e: 0.1 ** (e // 3), lambda e: 0.95 ** e])
single = optim.Adam([torch.zeros(3), torch.ones(2)], lr=0.5)
step_lr = optim.lr_scheduler.StepLR(single, step_size=2, gamma=0.5)
for epoch in range(8):
    for i in range(3):
        optimizer.step()
        optimizer.zero_grad()
        single.step()
    scheduler.step()
    step_lr.step()
    print("step", float(optimizer.param_groups[0]["lr"]), float(optimizer.param_groups[1]["lr"]),
          float(single.param_groups[0]["lr"]), float(weights_2.sum()))
'''


def test_an_optimizer_over_plain_tensors_steps_its_schedulers_like_torch(tmp_path):
    t, m, code = _convert_and_run(tmp_path, PLAIN_TENSORS)
    assert "import torch" not in code, code
    assert len(t) == len(m) == 8, (t, m, code)
    assert t[0][0] == 0.1 and t[3][0] < 0.011 and t[7][1] < t[0][1]
    assert all(row[3] == 25.0 for row in t)  # no grad, no step: torch never moves them
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=1e-6)


# codigologan/Elysium_Codex's src/train.py resumes from a checkpoint the repository ships (``torch.load(path,
# map_location=device, weights_only=True)`` then ``load_state_dict(ckpt["model_state"])``), and
# venkatKrishnan86/Pytorch-Tutorials' flow matching trains on ``torch.load('training_samples.pt')``, samples its data
# script wrote with torch.save. The port refused every file torch wrote ("was written by torch: convert it once with
# `mindport weights ...`"): a converted program could not read its own data or resume from its torch checkpoints
# with zero edits. torch's zip archive (data.pkl + raw little-endian storage records) is now read without torch
# (mindport.runtime.checkpoint): tensors (views with their offset and strides), Parameters, numbers and containers;
# a file holding other objects (a pickled nn.Module) is still refused with the way to convert it.
TORCH_FILES = '''
import torch
import torch.nn as nn

ckpt = torch.load("resume.pt", map_location="cpu", weights_only=True)
samples = torch.load("samples.pt")
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
model.load_state_dict(ckpt["model_state"])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
print("step", ckpt["meta"]["epoch"], ckpt["meta"]["best"], float(samples.sum()), samples.shape[0], samples.shape[1])
x, y = samples[:, :3], samples[:, 3:5]
for step in range(6):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", loss.item())
'''


def _write_torch_files(folder):
    import torch

    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    torch.save({"model_state": model.state_dict(), "meta": {"epoch": 4, "best": 0.25}}, folder / "resume.pt")
    base = torch.linspace(-1.0, 1.0, 60).reshape(5, 12)
    torch.save(base.t()[::1, :], folder / "samples.pt")  # a transposed view: strides (1, 12) on a shared storage


def test_a_converted_script_loads_the_files_torch_wrote(tmp_path):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(TORCH_FILES)
    convert_path(src, out, jobs=1)
    for folder in (src, out):
        _write_torch_files(folder)
    code = (out / "main.py").read_text()
    assert "import torch" not in code, code
    t, m = _run_in_folder(src), _run_in_folder(out)
    assert len(t) == len(m) == 7, (t, m)
    assert t[0][:2] == [4.0, 0.25] and t[0][3:] == [12.0, 5.0]
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=1e-5, atol=1e-6)
    assert t[-1][0] < t[1][0]


def test_a_torch_file_holding_a_module_is_refused_with_the_way_to_convert_it(tmp_path):
    import pytest
    import torch

    from mindport.runtime import checkpoint

    torch.save(torch.nn.Linear(2, 2), tmp_path / "whole.pt")
    with pytest.raises(ValueError, match="mindport weights"):
        checkpoint.load(str(tmp_path / "whole.pt"))


# The harness's float64 control (boot.py control: torch again in float64 from the same weights and data, the noise
# every deterministic entry's losses are judged against) failed on a script that torch.loads its data
# (venkat/flow_matching: RuntimeError: Trying to resize storage that is not resizable): torch.load rebuilds each tensor
# as torch.empty(0, dtype=its storage's) set to the storage, and the control's float64 torch.empty made that tensor
# float64 against a float32 storage. torch.load now runs with torch's own makers and the float32 tensors it gives are
# made float64, as the control makes the rest of a script's data.
LOADS_DATA = '''
import torch

data = torch.load("samples.pt")
w = torch.nn.Parameter(torch.zeros(3))
opt = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = ((data @ w - 1.0) ** 2).mean()
    loss.backward()
    opt.step()
    print("step", data.dtype, loss.item())
'''


def test_the_float64_control_runs_a_script_that_loads_a_torch_file(tmp_path):
    import subprocess
    import sys

    import torch

    from _harness import ROOT, child_env

    torch.save(torch.linspace(-1.0, 1.0, 12).reshape(4, 3), tmp_path / "samples.pt")
    (tmp_path / "main.py").write_text(LOADS_DATA)
    lines = {}
    for mode in ("track", "control"):
        p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "training" / "boot.py"), "torch", mode,
                            str(tmp_path), str(tmp_path / "main.py")], capture_output=True, text=True, cwd=tmp_path,
                           env=child_env(), timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        lines[mode] = [line.split() for line in p.stdout.splitlines() if line.startswith("step")]
    assert [row[1] for row in lines["track"]] == ["torch.float32"] * 3
    assert [row[1] for row in lines["control"]] == ["torch.float64"] * 3
    np.testing.assert_allclose([float(r[2]) for r in lines["control"]], [float(r[2]) for r in lines["track"]],
                               rtol=1e-6)
