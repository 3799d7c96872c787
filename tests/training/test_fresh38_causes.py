"""Causes found by the training corpus's first contact with five more repositories (benchmarks/training/fresh38.json):
one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

TRAINER_LOSS_ON_SELF_IN_UNPACKING = '''
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, y):
        logits = self.fc(x)
        return logits, nn.functional.cross_entropy(logits, y)


class Trainer:
    def __init__(self, model, max_iters):
        self.model = model
        self.optimizer = None
        self.loss = None
        self.iter_num = 0
        self.max_iters = max_iters
        self.callbacks = []

    def run(self, x, y):
        model = self.model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.1)
        while True:
            logits, self.loss = model(x, y)
            model.zero_grad(set_to_none=True)
            self.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            self.optimizer.step()
            for callback in self.callbacks:
                callback(self)
            self.iter_num += 1
            if self.iter_num >= self.max_iters:
                break


net = Net()
with torch.no_grad():
    net.fc.weight.copy_(torch.tensor(np.linspace(-0.5, 0.5, 12, dtype=np.float32).reshape(3, 4)))
    net.fc.bias.fill_(0.1)
x = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4))
y = torch.tensor([0, 1, 2, 0, 1, 2])
trainer = Trainer(net, 5)
trainer.callbacks.append(lambda t: print("step", t.loss.item()))
trainer.run(x, y)
'''


def test_loss_stored_on_self_in_an_unpacking():
    """cccbook/py2gpt's minGPT Trainer: ``logits, self.loss = model(x, y)`` then ``self.loss.backward()``. An attribute
    inside an unpacking was read as writing nothing (only ``logits``), so nothing before the backward computed
    ``self.loss``: MP105, and the port crashed on ``Tensor.backward``. The store into ``self`` now counts as its write
    (and, like ``self.h = h``, mutates the object rather than rebinding it: forward_fn neither takes nor returns
    ``self``); a callback reading ``trainer.loss.item()`` afterwards sees the step's loss."""
    code = _convert(TRAINER_LOSS_ON_SELF_IN_UNPACKING)
    assert "import torch" not in code and ".backward()" not in code, code
    assert "def forward_fn():" in code, code
    t, m = _losses(TRAINER_LOSS_ON_SELF_IN_UNPACKING, "torch_self_unpack"), _losses(code, "ms_self_unpack")
    assert len(t) == len(m) == 5, (t, m, code)
    for a, b in zip(m, t):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]


PARAMETER_LIST_NAMED_PARAMS = '''
import numpy as np
import torch
import torch.nn as nn


class NNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._params = nn.ParameterList([
            nn.Parameter(torch.tensor(np.linspace(-0.6, 0.6, 12, dtype=np.float32).reshape(4, 3))),
            nn.Parameter(torch.tensor(np.linspace(0.5, -0.3, 3, dtype=np.float32).reshape(3, 1))),
        ])
        self._cells = nn.ModuleList([nn.LayerNorm(3)])

    def forward(self, x):
        x = self._cells[0](torch.matmul(x, self._params[0]))
        for param in self._params[1:]:
            x = torch.relu(torch.matmul(x, param))
        return x


model = NNModel()
x = torch.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
y = torch.tensor(np.linspace(0.2, 0.9, 5, dtype=np.float32).reshape(5, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.MSELoss()
for epoch in range(5):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_module_attribute_named_like_a_cell_internal():
    """wararaki718/scrapbox7's cross net: ``self._params = nn.ParameterList([...])`` is the model's own name in torch
    (torch keeps ``_parameters``), but a MindSpore Cell keeps its Parameters in ``self._params``: the assignment
    replaced that dict and building the model failed (``'ParameterList' object has no attribute 'items'``). The
    Cell's private names torch's Module lacks (``_params``, ``_cells``, ...) now take a trailing underscore like its
    public ones (``cells_``); the model builds and trains as torch's does. (Writing this test: a slice of a
    ParameterList, ``self._params[1:]``, raised TypeError in mindport.runtime.containers; it gives the Parameters.)"""
    code = _convert(PARAMETER_LIST_NAMED_PARAMS)
    assert "self._params_" in code and "self._cells_" in code, code
    t, m = _losses(PARAMETER_LIST_NAMED_PARAMS, "torch_params_name"), _losses(code, "ms_params_name")
    assert len(t) == len(m) == 5, (t, m, code)
    for a, b in zip(m, t):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]
