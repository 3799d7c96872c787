"""MindSpore's convolutions on the AVX2 oneDNN path (mindport/cpu_kernels.py): every process mindport starts for
MindSpore gets the cap, a user's own choice is kept, and the capped kernels give torch's numbers (forward and
gradients, plain, transposed and depthwise convolutions) in fresh processes, where oneDNN reads the variable."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from mindport.cpu_kernels import CAP, VARIABLE, capped
from mindport.proofs.distributed import _venv_env
from mindport.validators.parity.worker import _env

_PROGRAM = r"""
import json, sys
import numpy as np
import mindspore as ms
from mindspore import nn, ops

x = ms.Tensor(np.load(sys.argv[1]))
out = {}
layers = {
    "conv": nn.Conv2d(8, 6, 3, pad_mode="pad", padding=2, dilation=2, has_bias=True),
    "depthwise": nn.Conv2d(8, 8, 3, pad_mode="pad", padding=1, group=8, has_bias=False),
    "transposed": nn.Conv2dTranspose(8, 4, 2, stride=2, pad_mode="valid", has_bias=True),
}
weights = np.load(sys.argv[2])
for name, layer in layers.items():
    layer.weight.set_data(ms.Tensor(weights[name + ".weight"]))
    if layer.bias is not None:
        layer.bias.set_data(ms.Tensor(weights[name + ".bias"]))
    grad = ms.value_and_grad(lambda a, layer=layer: (layer(a) ** 2).sum(), 0, layer.trainable_params())
    y = layer(x)
    _, (gx, gw) = grad(x)
    out[name] = [y.asnumpy().tolist(), gx.asnumpy().tolist(), gw[0].asnumpy().tolist()]
print("RESULT" + json.dumps(out))
"""


def test_every_mindspore_process_mindport_starts_gets_the_cap_and_a_users_choice_is_kept(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert _env()[VARIABLE] == CAP  # the parity sides of validate and migrate
    assert _venv_env()[VARIABLE] == CAP  # msrun / torchrun of the distributed proofs
    monkeypatch.setenv(VARIABLE, "AVX512_CORE")
    assert _env()[VARIABLE] == "AVX512_CORE"
    assert capped({VARIABLE: "SSE41"}) == {VARIABLE: "SSE41"}


def test_the_mindport_command_caps_itself_before_any_command_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    code = ("import os, sys; from click.testing import CliRunner; from mindport.cli import main; "
            "r = CliRunner().invoke(main, ['lint', sys.argv[1]]); print('CAP=' + os.environ.get('ONEDNN_MAX_CPU_ISA', ''))")
    (tmp_path / "a.py").write_text("x = 1\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.py")], env=env, capture_output=True,
                         text=True, timeout=120)
    assert f"CAP={CAP}" in out.stdout, out.stderr[-2000:]


@pytest.mark.parametrize("setting", [CAP, None])
def test_capped_and_default_convolutions_give_torchs_numbers(tmp_path, setting):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 9, 11)).astype(np.float32)
    weights = {"conv.weight": rng.standard_normal((6, 8, 3, 3)).astype(np.float32) * 0.2,
               "conv.bias": rng.standard_normal(6).astype(np.float32),
               "depthwise.weight": rng.standard_normal((8, 1, 3, 3)).astype(np.float32) * 0.2,
               "transposed.weight": rng.standard_normal((8, 4, 2, 2)).astype(np.float32) * 0.2,
               "transposed.bias": rng.standard_normal(4).astype(np.float32)}
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "w.npz", **weights)
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    if setting:
        env[VARIABLE] = setting
    env["ONEDNN_VERBOSE"] = "1"
    proc = subprocess.run([sys.executable, "-c", _PROGRAM, str(tmp_path / "x.npy"), str(tmp_path / "w.npz")],
                          env=env, capture_output=True, text=True, timeout=300)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert line, proc.stderr[-3000:]
    got = json.loads(line[0][len("RESULT"):])
    if setting:  # capped: no convolution of the run took the slow NCHW reference path
        convs = [ln for ln in proc.stdout.splitlines() if ",convolution," in ln and ",exec," in ln]
        assert convs and not [ln for ln in convs if "ref:any" in ln], convs[:3]

    t = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    tx = torch.tensor(x, requires_grad=True)
    modules = {
        "conv": lambda a: torch.nn.functional.conv2d(a, t["conv.weight"], t["conv.bias"], padding=2, dilation=2),
        "depthwise": lambda a: torch.nn.functional.conv2d(a, t["depthwise.weight"], None, padding=1, groups=8),
        "transposed": lambda a: torch.nn.functional.conv_transpose2d(a, t["transposed.weight"], t["transposed.bias"],
                                                                     stride=2),
    }
    for name, fn in modules.items():
        tx.grad = None
        y = fn(tx)
        (y ** 2).sum().backward()
        want = [y.detach().numpy(), tx.grad.numpy(), t[name + ".weight"].grad.numpy()]
        for what, a, b in zip(("output", "input gradient", "weight gradient"), got[name], want):
            np.testing.assert_allclose(np.array(a, dtype=np.float32), b, rtol=1e-4, atol=1e-4,
                                       err_msg=f"{name} {what} ({setting or 'default'})")
