"""torch.optim.SGD is MindSpore's own optimizer (mindspore.experimental.optim.SGD, explicit arguments) in a project
where no float64 tensor can come to be (mindport.migrator.project.float64_free); mindport.runtime.optim.SGD, which
exists for a float64 parameter MindSpore's ops.SGD refuses, only where one may arrive. Both against real torch:
parameters printed after each step of momentum, dampening, weight decay, nesterov and maximize."""
from __future__ import annotations

import ast

import numpy as np
import pytest

from mindport import convert_source
from mindport.migrator.project import float64_free
from test_fresh2_causes import _losses
from test_fresh_causes import _convert

FLOAT32_MODEL = '''
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.tensor([[0.5, -1.0, 0.2], [1.5, 0.25, -0.7], [-0.3, 0.8, 0.4], [0.9, -0.6, 1.1]])
y = torch.tensor([[1.0, 0.0], [-0.5, 0.3], [0.25, -0.2], [0.75, 0.6]])
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, OPTIONS)
loss_func = nn.MSELoss()
for step in range(6):
    optimizer.zero_grad()
    loss = loss_func(net(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item(), *[v.item() for p in net.parameters() for v in p.reshape(-1)])
'''

OPTIONS = ["momentum=0.9", "momentum=0.9, dampening=0.3", "momentum=0.8, nesterov=True, weight_decay=0.01",
           "weight_decay=0.1, maximize=True", "momentum=0.5, dampening=0.2, weight_decay=0.05, maximize=True"]


@pytest.mark.parametrize("options", OPTIONS)
def test_float32_model_trains_with_mindspores_sgd(options):
    source = FLOAT32_MODEL.replace("OPTIONS", options)
    code = _convert(source)
    assert "ms_optim.SGD(" in code and "mp_optim" not in code, code
    t = _losses(source, "torch_native_sgd")
    m = _losses(code, "ms_native_sgd")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(np.array(m), np.array(t), rtol=2e-5, atol=1e-6)


FLOAT64_SOURCES = [
    "net.double()",
    "net.to(torch.float64)",
    "w = torch.zeros(3, dtype=torch.double, requires_grad=True)",
    "torch.set_default_dtype(torch.float64)",
    "import numpy as np\nw = nn.Parameter(torch.from_numpy(np.ones(3)))",
    "import numpy as np\nw = nn.Parameter(torch.tensor(np.ones(3)))",
    "w = torch.zeros(3).type('torch.DoubleTensor')",
    "from sklearn.datasets import make_moons\nX, _ = make_moons()\nw = torch.tensor(X, requires_grad=True)",
    "w = nn.Parameter(torch.tensor(X))",
]


@pytest.mark.parametrize("line", FLOAT64_SOURCES)
def test_a_float64_source_keeps_the_runtime_sgd(line):
    """Any way a float64 tensor can come to be keeps mindport.runtime.optim.SGD (torch's update in float64)."""
    source = FLOAT32_MODEL.replace("OPTIONS", "momentum=0.9") + line + "\n"
    assert not float64_free([ast.parse(source)])
    assert "mp_optim.SGD(" in convert_source(source, "script.py").code  # set_default_dtype is flagged (MP101)


def test_python_numbers_stay_float32():
    source = "import numpy as np\nimport torch\nx = torch.tensor([[1.0, -2.5], [3, 4]])\n"
    assert float64_free([ast.parse(source)])


FLOAT64_LEAF = '''
import torch

x = torch.linspace(-1, 1, 16, dtype=torch.float64)
y = 0.5 * x - 0.25
w = torch.zeros(2, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.2, momentum=0.9, dampening=0.1, weight_decay=0.01)
for i in range(6):
    optimizer.zero_grad()
    loss = ((w[0] * x + w[1] - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print("step", loss.item(), w[0].item(), w[1].item())
'''


def test_float64_leaf_keeps_torchs_update():
    """Where a float64 parameter arrives, the runtime SGD (MindSpore's ops.SGD refuses float64) tracks torch."""
    code = _convert(FLOAT64_LEAF)
    assert "mp_optim.SGD(" in code, code
    t, m = _losses(FLOAT64_LEAF, "torch_f64_leaf"), _losses(code, "ms_f64_leaf")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-7, atol=1e-12)


def test_float64_in_another_notebook_cell_keeps_the_runtime_sgd():
    """A notebook's cells share one namespace: a float64 tensor made in one cell reaches the SGD of another."""
    import json

    from mindport.migrator.formats import convert_notebook_bytes

    def cell(source):
        return {"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None}

    def converted(first):
        notebook = {"cells": [cell(first), cell("import torch\nopt = torch.optim.SGD([w], lr=0.1)\n")],
                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        out = convert_notebook_bytes(json.dumps(notebook).encode(), "n.ipynb", {})[0]
        return json.loads(out)["cells"][1]["source"]

    assert "mp_optim.SGD(" in converted("import torch\nw = torch.zeros(3, dtype=torch.float64, requires_grad=True)\n")
    assert "ms_optim.SGD(" in converted("import torch\nw = torch.nn.Parameter(torch.zeros(3))\n")
