"""Causes found by the training corpus's first contact with eight more repositories (benchmarks/training/, session
note trainfresh5.md): one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

ATTRIBUTE_SET_ON_A_GLOBAL_MODEL = '''
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = 1.0

    def forward(self, x):
        return self.fc(x) * self.scale


def update(mode):
    total = 0.0
    for xb, yb in batches:
        if mode == 'train':
            model.zero_grad()
        model.scale = 0.5 + 0.5 * len(yb) / 4
        output = model(xb)
        loss = loss_function(output, yb)
        if mode == 'train':
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(batches)


x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))
y = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1])
batches = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 8, 4)]
model = Net()
with torch.no_grad():
    model.fc.weight.copy_(torch.tensor(np.linspace(-0.5, 0.5, 6, dtype=np.float32).reshape(2, 3)))
    model.fc.bias.fill_(0.1)
loss_function = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(4):
    print("step", update('train'), update('val'))
'''


def test_attribute_set_on_a_global_model_inside_the_step():
    """mazzamani/lstm_collate: ``model.hidden = model.init_hidden()`` before the forward, in a function ``update(mode)``
    whose ``model`` is the script's global. An attribute store counted as a write of ``model``, so the general backward
    region took ``model`` as state carried across steps and rebound it (``(loss, model, output), grads =
    grad_fn(model)``): ``model`` became a local of ``update`` read before assignment (UnboundLocalError). An object
    mutated through an attribute is the same object: it is neither passed in nor handed back."""
    code = _convert(ATTRIBUTE_SET_ON_A_GLOBAL_MODEL)
    assert "import torch" not in code, code
    t, m = _losses(ATTRIBUTE_SET_ON_A_GLOBAL_MODEL, "torch_attr_global"), _losses(code, "ms_attr_global")
    assert len(t) == len(m) == 4, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]
