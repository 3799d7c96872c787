"""Causes found by the training corpus's first contact with six more repositories (benchmarks/training/, session
note trainfresh.md): one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np

from _harness import load_module


def _convert(source: str) -> str:
    from mindport import convert_source

    result = convert_source(source, "script.py")
    errors = [d.format() for d in result.diagnostics if d.severity == "error"]
    assert not errors, "\n".join(errors) + "\n" + result.code
    return result.code


def _losses(code: str, name: str) -> list[float]:
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    return [float(line.split()[-1]) for line in out.getvalue().splitlines() if line.startswith("step")]


def _same_losses(source: str, code: str, n: int, rtol: float = 1e-4) -> None:
    t, m = _losses(source, "torch_script"), _losses(code, "ms_script")
    assert len(t) == n and len(m) == n, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=rtol)
    assert t[-1] < t[0]


REBOUND_MODULE = '''
import torch
import torch.nn as nn
import torch.optim as opt

x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-0.3, 0.8, 0.1]])
y = torch.tensor([[1.0], [-0.5], [0.25]])
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3]]))
    model.bias.fill_(0.05)
loss_fn = nn.MSELoss()
opt = opt.Adam(model.parameters(), lr=0.05)
for t in range(6):
    loss = loss_fn(model(x), y)
    print("step", t, loss.item())
    model.zero_grad()
    loss.backward()
    opt.step()
'''


def test_optimizer_bound_to_the_name_of_the_optim_module_it_comes_from():
    """whoji/nn_adam, whoji/control_flow: ``import torch.optim as opt`` then ``opt = opt.Adam(...)``. The value reads
    the import before the assignment rebinds the name; the scope took the name as rebound everywhere, left
    ``opt.Adam`` unconverted after removing the import (NameError: name 'opt' is not defined)."""
    code = _convert(REBOUND_MODULE)
    assert "import torch" not in code, code
    _same_losses(REBOUND_MODULE, code, 6)


# --- the corpus harness (benchmarks/training/boot.py) ------------------------------------------------------------

def _run_boot(tmp_path, side, mode, script_text):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / f"{side}_{mode}.py"
    script.write_text(script_text)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(root / "benchmarks" / "training" / "boot.py"), side, mode, str(tmp_path),
                        str(script)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout.splitlines()[-1]


def test_mindspore_recurrent_layers_leave_the_scripts_numpy_stream_alone(tmp_path):
    """ah123666/rnn_sine: MindSpore's nn.RNN/LSTM/GRU and their cells draw their initial weights from numpy's global
    stream (np.random.uniform in __init__), torch's do not: the script's sine windows, drawn with np.random after
    building the model, differed (0.536 vs 0.511 at the first loss)."""
    torch_side = ("import numpy as np\nimport torch\nm = torch.nn.RNN(1, 4, batch_first=True)\nc = torch.nn.LSTMCell(2, 3)\n"
                  "print(np.random.randint(0, 1000, 4).tolist())\n")
    ms_side = ("import numpy as np\nimport mindspore as ms\nm = ms.nn.RNN(1, 4, batch_first=True)\nc = ms.nn.LSTMCell(2, 3)\n"
               "print(np.random.randint(0, 1000, 4).tolist())\n")
    assert _run_boot(tmp_path, "torch", "plain", torch_side) == _run_boot(tmp_path, "mindspore", "plain", ms_side)


def test_tracked_random_tensors_keep_requires_grad(tmp_path):
    """whoji/autograd_manual, whoji/custom_function: the tracker's torch.randn dropped ``requires_grad=True``, so the
    torch side of a manual two-layer net failed ("element 0 of tensors does not require grad")."""
    script = ("import torch\nw = torch.randn(3, 2, requires_grad=True)\nv = torch.rand((2,), requires_grad=True)\n"
              "u = torch.randn(2)\nprint(w.requires_grad, v.requires_grad, u.requires_grad, w.is_leaf)\n")
    assert _run_boot(tmp_path, "torch", "track", script) == "True True False True"
