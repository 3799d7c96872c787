"""Causes found by the training corpus's first contact with five more repositories (benchmarks/training/fresh42.json):
one test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh28_causes import _convert

# kimy-de/pinns's model.py: the PINN's layers are ``nn.utils.weight_norm(nn.Linear(a, b), dim=0)`` (in a list built
# by a helper, not ``self.conv = weight_norm(self.conv)``), and ``model.apply(weights_init)`` runs
# ``torch.nn.init.xavier_normal_(m.weight)`` on every Linear. A weight-normed layer's ``weight`` is computed (a
# Tensor, no ``set_data``): the init became ``m.weight.set_data(initializer(...))`` and the port failed before
# training (AttributeError: 'Tensor' object has no attribute 'set_data'). In a file that weight-norms a layer
# anywhere, an init of a member of a function's argument goes to the runtime init, which fills a Parameter by
# ``set_data`` and a computed Tensor in place (torch's init of it is undone by the next forward's recomputation).
WEIGHT_NORM_INIT = '''
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Sequential(*[nn.utils.weight_norm(nn.Linear(2, 6), dim=0)])
        self.out = nn.Linear(6, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


def weights_init(m):
    if isinstance(m, nn.Linear):
        torch.nn.init.xavier_normal_(m.weight)


model = Net()
model.apply(weights_init)
with torch.no_grad():
    model.hidden[0].weight_g.copy_(torch.tensor(np.linspace(0.5, 1.5, 6, dtype=np.float32).reshape(6, 1)))
    model.hidden[0].weight_v.copy_(torch.tensor(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(6, 2)))
    model.hidden[0].bias.copy_(torch.tensor(np.linspace(0.2, -0.3, 6, dtype=np.float32)))
    model.out.weight.copy_(torch.tensor(np.linspace(0.4, -0.5, 6, dtype=np.float32).reshape(1, 6)))
    model.out.bias.fill_(0.1)
x = torch.tensor(np.linspace(-1.0, 1.0, 16, dtype=np.float32).reshape(8, 2))
y = torch.sin(3.0 * x[:, :1]) + x[:, 1:] ** 2
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(6):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", loss.item())
'''


def test_init_of_an_argument_s_member_in_a_file_that_weight_norms_layers():
    code = _convert(WEIGHT_NORM_INIT)
    assert "set_data" not in code, code
    t, m = _losses(WEIGHT_NORM_INIT, "torch_wn42"), _losses(code, "ms_wn42")
    assert len(t) == len(m) == 6, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-6)
    assert t[-1][0] < t[0][0]
