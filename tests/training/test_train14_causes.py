"""Session train14 (issue 27): GradScaler without CUDA, and parameters unfrozen after the optimizer was built. One
test each, on real torch and real MindSpore, each failing without the fix; expected values are torch's, run here."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np

from _harness import load_module
from test_fresh_causes import _convert

SCALER_OVERFLOW = '''
import torch
import torch.nn as nn

x = torch.linspace(-1.0, 1.0, 32).reshape(8, 4)
y = torch.linspace(1.0, 3.0, 8).reshape(8, 1)
model = nn.Linear(4, 1)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-0.5, 0.5, 4).reshape(1, 4))
    model.bias.fill_(0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-37)
scaler = torch.cuda.amp.GradScaler()
for step in range(3):
    optimizer.zero_grad()
    with torch.cuda.amp.autocast():
        loss = ((model(x) - y) ** 2).mean() * 1e36  # finite, its gradients x 65536 are not
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print("step", loss.item())
    print("scale", scaler.get_scale())
print("weight", float(model.weight.detach().sum()))
'''


def _lines(code: str, name: str) -> dict[str, list[float]]:
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    seen: dict[str, list[float]] = {}
    for line in out.getvalue().splitlines():
        key, _, value = line.partition(" ")
        seen.setdefault(key, []).append(float(value))
    return seen


def test_cuda_grad_scaler_without_cuda_is_disabled():
    """``torch.cuda.amp.GradScaler()`` without CUDA disables itself (a warning): the loss is not scaled,
    ``get_scale()`` is 1.0 and ``step`` is the optimizer's step. The mapping made a DynamicLossScaler(65536) on every
    device, so gradients of 1e36 overflowed once scaled, the port skipped every step and halved its scale (and
    ``get_scale()`` was left a DynamicLossScaler method that does not exist). On a MindSpore CPU run the scaler is now
    the disabled one (mindport.runtime.framework.cuda_loss_scaler); a GPU run keeps DynamicLossScaler."""
    code = _convert(SCALER_OVERFLOW)
    assert "cuda_loss_scaler" in code, code
    t, m = _lines(SCALER_OVERFLOW, "torch_scaler_overflow"), _lines(code, "ms_scaler_overflow")
    assert t["scale"] == [1.0, 1.0, 1.0], t
    assert m["scale"] == t["scale"], (m, code)
    np.testing.assert_allclose(m["step"], t["step"], rtol=1e-5)
    np.testing.assert_allclose(m["weight"], t["weight"], rtol=1e-5)
    assert t["step"][-1] != t["step"][0]  # torch stepped


def test_grad_scaler_on_the_cpu_device_scales():
    """``torch.amp.GradScaler("cpu")`` is enabled on the CPU (torch >= 2.3): it stays MindSpore's DynamicLossScaler,
    and the same overflowing loop skips its steps and halves the scale as torch's does."""
    source = SCALER_OVERFLOW.replace("torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cpu")')
    code = _convert(source)
    assert "ms.amp.DynamicLossScaler(" in code and "cuda_loss_scaler" not in code, code
    t, m = _lines(source, "torch_scaler_cpu"), _lines(code, "ms_scaler_cpu")
    assert t["scale"] == [32768.0, 16384.0, 8192.0], t
    assert m["scale"] == t["scale"], (m, code)
    np.testing.assert_allclose(m["step"], t["step"], rtol=1e-5)
    np.testing.assert_allclose(m["weight"], t["weight"], rtol=1e-5)
