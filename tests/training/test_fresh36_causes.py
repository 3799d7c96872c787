"""Causes found by the training corpus's first contact with four more repositories (benchmarks/training/fresh36.json):
one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

MODULE_LEVEL_MODEL_THEN_BACKWARD = '''
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


net = Net()
with torch.no_grad():
    net.fc1.weight.copy_(torch.tensor(np.linspace(-0.6, 0.6, 24, dtype=np.float32).reshape(6, 4)))
    net.fc1.bias.fill_(0.05)
    net.fc2.weight.copy_(torch.tensor(np.linspace(0.4, -0.4, 12, dtype=np.float32).reshape(2, 6)))
    net.fc2.bias.fill_(-0.1)
x = torch.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
target = torch.tensor(np.linspace(0.5, -0.5, 10, dtype=np.float32).reshape(5, 2))
criterion = nn.MSELoss()
loss = criterion(net(x), target)
print("step", loss.item())
net.zero_grad()
loss.backward()
for f in net.parameters():
    f.data.sub_(f.grad.data * 0.5)
print("step", criterion(net(x), target).item())
optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
for epoch in range(3):
    optimizer.zero_grad()
    out = net(x)
    loss = criterion(out, target)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
net.eval()
inputs = torch.tensor(np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4))
inputs.requires_grad = True
outputs = net(inputs)
loss = criterion(outputs, torch.zeros(2, 2))
optimizer.zero_grad()
loss.backward()
print("step", loss.item(), *inputs.grad.flatten().tolist())
'''


def test_model_built_at_module_level_stays_out_of_forward_fn():
    """zinsmatt/net.py (the 60-minute-blitz LeNet) and zinsmatt/curve_fitting_dropout.py: a script without functions
    builds its model, then calls ``loss.backward()`` at module level (once by hand, later after a training loop, on an
    input with requires_grad). The backward slice reached back to ``net = Net()`` and put it in forward_fn: the model
    was built afresh at each backward (new weights, the optimizer's parameters never the model's) and the name was
    read before the first call bound it (NameError on ``net.set_train``). Building a model, a loss or a helper the
    forward calls is not recorded by autograd; it now stays where it is."""
    code = _convert(MODULE_LEVEL_MODEL_THEN_BACKWARD)
    assert "import torch" not in code and ".backward()" not in code, code
    assert code.count("Net()") == 1, code
    t, m = _losses(MODULE_LEVEL_MODEL_THEN_BACKWARD, "torch_module_model"), _losses(code, "ms_module_model")
    assert len(t) == len(m) == 6, (t, m, code)
    for a, b in zip(m, t):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert t[1][0] < t[0][0]


NUMPY_CELL_THEN_TORCH_CELL = '''
import numpy as np

x = np.linspace(-1, 1, 12).reshape(4, 3)
y = np.linspace(0, 1, 8).reshape(4, 2)
w = np.linspace(0.5, -0.5, 6).reshape(3, 2)
for t in range(3):
    y_pred = x.dot(w)
    loss = np.sum((y_pred - y) ** 2)
    grad = x.T.dot(2.0 * (y_pred - y))
    w -= 0.05 * grad
    print("step", loss)

import torch

x = torch.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
y = torch.tensor(np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2))
w = torch.tensor(np.linspace(0.5, -0.5, 6, dtype=np.float32).reshape(3, 2), requires_grad=True)
for t in range(3):
    loss = (x.mm(w) - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.05 * w.grad
        w.grad.zero_()
    print("step", loss.item())
'''


def test_numpy_cell_before_a_torch_cell_keeps_numpy_operators():
    """zinsmatt/example.py, a notebook-style file: a numpy cell binds ``y = np.random.randn(...)``, a later torch cell
    rebinds ``y = torch.randn(...)``. The numpy-left-of-a-tensor rewrite (``ops.sub(y_pred, y)``) read y's kind over
    the whole file: in the numpy cell, before MindSpore was even imported, NameError 'ops'. The name's kind at that
    use (numpy's there) decides now."""
    code = _convert(NUMPY_CELL_THEN_TORCH_CELL)
    assert "import torch" not in code and "ops.sub(" not in code, code
    t, m = _losses(NUMPY_CELL_THEN_TORCH_CELL, "torch_numpy_cell"), _losses(code, "ms_numpy_cell")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-5)

