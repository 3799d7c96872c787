"""Causes session 52 met (the two session 51 left open, and fresh52's first contact), each a class with a fixture of
our own, run converted under MindSpore against torch; the expected values are torch's, run here."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

# kekmodel/FixMatch-pytorch (fresh51) steps with NVIDIA apex when asked: ``if args.amp: with amp.scale_loss(loss,
# optimizer) as scaled_loss: scaled_loss.backward()`` / ``else: loss.backward()``, and ``model, optimizer =
# amp.initialize(model, optimizer, opt_level=...)``. The ``as`` name was "not computed in this block" (MP105) and the
# whole loop was left to torch (AttributeError: 'Tensor' object has no attribute 'backward'). Class: a backward on
# the target of apex's scale_loss context. apex scales for CUDA only and unscales before the step: the target is the
# loss it wraps (as GradScaler's scale on the CPU); initialize returns its arguments (packages.toml, the training
# rule's _apex_scaled). The torch side runs without apex (not installed; apex on CPU changes nothing we compare).
APEX_STEP = '''
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, optimizer, x, y, use_amp):
    if use_amp:
        from apex import amp
    for step in range(6):
        out = model(x)
        loss = F.mse_loss(out, y)
        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        model.zero_grad()
        print("step", loss.item())


def train_apex_only(model, optimizer, x, y):
    from apex import amp
    for step in range(4):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        optimizer.step()
        print("step", loss.item())


def main():
    use_amp = len(sys.argv) > 1
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if use_amp:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    x = torch.linspace(-1, 1, 40).reshape(10, 4)
    y = torch.stack([x.sum(1), x[:, 0] * x[:, 1]], 1)
    train(model, optimizer, x, y, use_amp)
    if use_amp:
        train_apex_only(model, optimizer, x, y)
    else:
        for step in range(4):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            print("step", loss.item())


if __name__ == "__main__":
    main()
'''


def _run(folder, *argv) -> list[list[float]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "main.py", *argv], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [[float(v) for v in line.split()[1:]] for line in done.stdout.splitlines() if line.startswith("step")]


def _convert(tmp_path, source):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(source)
    convert_path(src, out, jobs=1)
    return src, out, (out / "main.py").read_text()


def test_a_backward_on_apex_scale_loss_target_is_the_wrapped_loss(tmp_path):
    src, out, code = _convert(tmp_path, APEX_STEP)
    assert "import amp" not in code and "amp.scale_loss(" not in code and "scaled_loss.backward()" not in code and "scaled.backward()" not in code, code
    assert "mp_ecosystem.amp_initialize(" in code and "mp_ecosystem.amp_scale_loss(" in code
    torch_losses = _run(src)  # torch without apex: the branch not taken
    port_amp = _run(out, "amp")  # the port through the apex branch (initialize, scale_loss)
    port_plain = _run(out)
    assert len(torch_losses) == len(port_amp) == len(port_plain) == 10
    np.testing.assert_allclose(port_amp, torch_losses, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(port_plain, torch_losses, rtol=1e-5, atol=1e-7)
    assert torch_losses[-1][0] < 0.5 * torch_losses[0][0]
