"""Causes found by the training corpus's first contact with seven more repositories (benchmarks/training/, session
note trainfresh3.md): one test each, on real torch and real MindSpore, each failing without its fix."""
from __future__ import annotations

import numpy as np

from test_fresh2_causes import _losses
from test_fresh_causes import _convert

FORWARD_BEFORE_ZERO_GRAD = '''
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1)


x = torch.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
y = torch.tensor([0, 1, 2, 1, 0])
model = Net()
with torch.no_grad():
    model.fc.weight.copy_(torch.tensor(np.linspace(-0.5, 0.5, 12, dtype=np.float32).reshape(3, 4)))
    model.fc.bias.fill_(0.1)
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=0.1)
for epoch in range(5):
    model.train()
    output = model(x)
    optimizer.zero_grad()
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
    print("step", loss.item(), float(output.sum()))
    prediction = torch.argmax(output, dim=1)
'''


def test_model_called_before_zero_grad_and_the_loss():
    """jihun/rnn_hello, jihun/lstm_chars: ``output = model(x)``, then ``optimizer.zero_grad()``, then ``loss =
    criterion(output, y)``. The loop rewrite differentiated only the assignments right before ``.backward()``: output
    entered forward_fn as a constant, every gradient was zero and the loss never moved (silently: 0.1944 each of 50
    epochs). The model call belongs to the differentiated function; output comes back out for the argmax after."""
    code = _convert(FORWARD_BEFORE_ZERO_GRAD)
    assert "import torch" not in code and ".backward()" not in code, code
    t, m = _losses(FORWARD_BEFORE_ZERO_GRAD, "torch_fwd_before"), _losses(code, "ms_fwd_before")
    assert len(t) == len(m) == 5, (t, m, code)
    np.testing.assert_allclose(m, t, rtol=1e-4)
    assert t[-1][0] < t[0][0]


IMPLICIT_SOFTMAX_DIM = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

x2 = torch.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
x3 = torch.tensor(np.linspace(-1, 3, 24, dtype=np.float32).reshape(2, 3, 4))
soft, log_soft = nn.Softmax(), nn.LogSoftmax()
for x in (x2, x3):
    print("step", *soft(x).flatten().tolist(), *log_soft(x).flatten().tolist(),
          *F.softmax(x).flatten().tolist(), *F.log_softmax(x).flatten().tolist())
'''


def test_softmax_with_torchs_implicit_dim():
    """jihun/xor_mlp: ``nn.Softmax()`` with no dim (torch's deprecated implicit dim: 0 for a 0-, 1- or 3-d input, else
    1) was MP102 and stayed torch, so the port still imported torch. The runtime picks the axis from the input's rank
    at run time, as torch does (nn.Softmax, nn.LogSoftmax, F.softmax, F.log_softmax)."""
    code = _convert(IMPLICIT_SOFTMAX_DIM)
    assert "import torch" not in code, code
    t, m = _losses(IMPLICIT_SOFTMAX_DIM, "torch_implicit_dim"), _losses(code, "ms_implicit_dim")
    assert len(t) == len(m) == 2, (t, m, code)
    for a, b in zip(t, m):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
