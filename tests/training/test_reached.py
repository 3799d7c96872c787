"""Which parameters a backward reaches: torch leaves ``.grad`` None on a parameter the step's graph did not use, and
its optimizers skip it (no momentum, no weight decay); a parameter the graph used gets a gradient, all zero or not,
and is updated. MindSpore's grad hands both an all-zero gradient: mindport.runtime.training tells them apart by the
Parameters the forward read from their Cells."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np

from _harness import load_module

DEAD_AND_UNUSED = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.out = nn.Linear(4, 1)
        self.spare = nn.Linear(3, 1)  # defined, never called

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


net = Net()
with torch.no_grad():
    net.hidden.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.2, 0.1, -0.1], [-0.3, 0.2, 0.1], [0.05, 0.05, 0.05]]))
    net.hidden.bias.fill_(-10.0)  # every hidden unit dead: the layer's gradient is exactly zero, and it is reached
    net.out.weight.copy_(torch.tensor([[0.5, -0.5, 0.25, 0.1]]))
    net.out.bias.fill_(0.1)
    net.spare.weight.copy_(torch.tensor([[0.3, -0.1, 0.2]]))  # a copied-into weight, held and put back
    net.spare.bias.fill_(0.2)
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-0.3, 0.8, 0.1]])
y = torch.tensor([[1.0], [-0.5], [0.25]])
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
for step in range(4):
    loss = ((net(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 6), round(net.hidden.bias[0].item(), 6), round(net.hidden.weight[0, 0].item(), 6),
          round(net.spare.bias[0].item(), 6), net.hidden.weight.grad is None, net.spare.weight.grad is None)
'''


def _printed(code: str, name: str) -> list[str]:
    out = io.StringIO()
    with redirect_stdout(out):
        load_module(code, name)
    return out.getvalue().splitlines()


def test_a_called_layer_with_an_all_zero_gradient_is_updated_and_an_unused_one_is_not():
    """A dead ReLU layer is reached (torch's weight decay and momentum move it: hidden.bias -10 -> -9.99); the layer
    the forward never calls keeps .grad None and its weights. The earlier rule (a layer whose gradient is all zero
    was not reached) left the dead layer where it was."""
    from mindport import convert_source

    result = convert_source(DEAD_AND_UNUSED, "dead_and_unused.py")
    assert not [d for d in result.diagnostics if d.severity == "error"], result.code
    torch_lines = _printed(DEAD_AND_UNUSED, "torch_dead_and_unused")
    ms_lines = _printed(result.code, "ms_dead_and_unused")
    assert len(torch_lines) == len(ms_lines) == 4
    for t, m in zip(torch_lines, ms_lines):
        *tv, t_none_hidden, t_none_spare = t.split()
        *mv, m_none_hidden, m_none_spare = m.split()
        np.testing.assert_allclose([float(v) for v in mv], [float(v) for v in tv], rtol=1e-5, atol=1e-6)
        assert (m_none_hidden, m_none_spare) == (t_none_hidden, t_none_spare) == ("False", "True")
    assert float(torch_lines[-1].split()[2]) > -9.99  # weight decay moved the dead layer
    assert float(torch_lines[-1].split()[4]) == 0.2    # the unused layer stayed


FROZEN_ENCODER = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)


net = Net()
enc, head = net.enc, net.head
with torch.no_grad():
    enc.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.2, 0.1, -0.1], [-0.3, 0.2, 0.1], [0.05, 0.05, 0.05]]))
    enc.bias.fill_(0.1)
    head.weight.copy_(torch.tensor([[0.5, -0.5, 0.25, 0.1]]))
    head.bias.fill_(0.1)
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-0.3, 0.8, 0.1]])
y = torch.tensor([[1.0], [-0.5], [0.25]])
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
for step in range(4):
    with torch.no_grad():  # a frozen feature extractor (a target network, a teacher): no gradient flows into it
        features = torch.tanh(enc(x))
    loss = ((head(features) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 6), round(enc.weight[0, 0].item(), 6), round(head.bias[0].item(), 6),
          enc.weight.grad is None)
'''


def test_a_no_grad_block_inside_the_differentiated_code_stops_the_gradient():
    """``with torch.no_grad():`` before the backward: the block was dropped as everywhere else, so the region
    differentiated through the encoder and trained it (torch leaves it: no gradient, .grad None, no weight decay)."""
    from mindport import convert_source

    result = convert_source(FROZEN_ENCODER, "frozen_encoder.py")
    assert not [d for d in result.diagnostics if d.severity == "error"], result.code
    assert "no_grad()" in result.code, result.code
    torch_lines = _printed(FROZEN_ENCODER, "torch_frozen_encoder")
    ms_lines = _printed(result.code, "ms_frozen_encoder")
    assert len(torch_lines) == len(ms_lines) == 4
    for t, m in zip(torch_lines, ms_lines):
        *tv, t_none = t.split()
        *mv, m_none = m.split()
        np.testing.assert_allclose([float(v) for v in mv], [float(v) for v in tv], rtol=1e-5, atol=1e-6)
        assert m_none == t_none == "True"
    assert float(torch_lines[-1].split()[2]) == 0.1  # the encoder did not move
