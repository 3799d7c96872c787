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
