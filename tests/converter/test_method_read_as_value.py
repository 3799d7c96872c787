"""A torch.Tensor method read as a value and never called (deguchi/burgers' ``torch.mean(b, dim=0).values``): a
callable, as in torch, on values known to be tensors; the list of the methods MindSpore's Tensor lacks is data
checked against the installed MindSpore here (the converter never imports MindSpore: tests/test_packaging.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from mindport import convert_source

DATA = Path(__file__).resolve().parents[2] / "mindport" / "mappings" / "data"


def _names(file):
    return {line.strip() for line in (DATA / file).read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")}


def test_the_list_of_tensor_methods_mindspore_lacks_matches_the_installed_mindspore():
    import mindspore as ms

    probe = ms.Tensor([0.0])
    expected = {name for name in _names("torch_tensor_methods.txt") if not hasattr(probe, name)}
    listed = _names("tensor_methods_mindspore_lacks.txt")
    assert listed == expected, (sorted(listed - expected), sorted(expected - listed))
    assert {"values", "indices", "is_coalesced", "mode"} <= listed


def _losses(source, tag, tmp):
    path = tmp / f"{tag}.py"
    path.write_text(source)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:] + "\n" + source
    return [[float(v) for v in line.split()[1:]] for line in out.stdout.splitlines() if line.startswith("step")]


# A PINN-like model (written here) that keeps its input bounds: min and max through torch's named tuples (`.values`
# is a field there), a mean and a row sum whose `.values` is torch.Tensor.values, a sparse tensor's method, read and
# never called (a bound method in torch); a torch.distributions object's `.mode` (the distribution's property, not
# torch.Tensor.mode) and a dict's `.values` beside them. The loop trains on the bounds-scaled input.
METHOD_READ_AS_VALUE = '''
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self, points):
        super().__init__()
        self.bounds = points
        self.lb = torch.min(self.bounds, dim=0).values
        self.ub = torch.max(self.bounds, dim=0).values
        self.mn = torch.mean(self.bounds, dim=0).values
        self.spread = self.bounds.sum(1).values
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return self.fc(2.0 * (x - self.lb) / (self.ub - self.lb) - 1.0)


points = torch.tensor([[0.0, -1.0], [0.5, 0.25], [1.0, 1.0], [0.25, -0.5], [0.75, 0.5]])
target = torch.sin(points[:, :1] * 3.0) * points[:, 1:]
model = Scaled(points)
with torch.no_grad():
    model.fc.weight.copy_(torch.tensor([[0.4, -0.3]]))
    model.fc.bias.fill_(0.1)
coalesced = torch.abs(points).is_coalesced
try:
    model.mn()
    raised = 0
except RuntimeError:
    raised = 1
print("step", int(callable(model.mn)), int(callable(model.spread)), int(callable(coalesced)), raised)
table = {"a": 1.0, "b": 2.0}
read = table.values
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(5):
    centre = torch.distributions.Normal(model.fc.bias, torch.ones(1)).mode
    loss = ((model(points) - target) ** 2).mean() + 0.1 * (centre ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", loss.item(), sum(read()))
'''


def test_a_tensor_method_read_as_a_value_is_a_callable_as_in_torch(tmp_path):
    """deguchi/burgers: ``self.mn = torch.mean(self.bounds, dim=0).values`` reads torch.Tensor.values (a sparse
    tensor's method) as a value and never calls it: torch stores a bound method and trains on. The port kept
    ``.values`` on MindSpore's Tensor, which has no such attribute: AttributeError while building the model. Now the
    read is ``mp_tensor.method_value(...)`` (a callable whose call raises torch's RuntimeError on a dense tensor),
    flagged MP104, on values known to be tensors only: the named-tuple fields of ``torch.min(b, dim=0)`` are still
    read by position, a distribution's ``.mode`` and a dict's ``.values`` are theirs."""
    result = convert_source(METHOD_READ_AS_VALUE, "script.py")
    assert not [d for d in result.diagnostics if d.severity == "error"], result.code
    code = result.code
    flagged = sorted(d.api for d in result.diagnostics if d.code == "MP104")
    assert flagged == ["torch.Tensor.is_coalesced", "torch.Tensor.values", "torch.Tensor.values"], (flagged, code)
    assert code.count("method_value(") == 3 and ").mode" in code and "read = table.values" in code, code
    t = _losses(METHOD_READ_AS_VALUE, "torch_method_read", tmp_path)
    m = _losses(code, "ms_method_read", tmp_path)
    assert t[0] == [1.0, 1.0, 1.0, 1.0], t  # torch: callables, whose call raises on a dense tensor
    assert m[0] == t[0], (m[0], code)
    assert len(m) == len(t) == 6
    np.testing.assert_allclose(np.concatenate(m[1:]), np.concatenate(t[1:]), rtol=1e-5)
    assert t[-1][0] < t[1][0]
