"""Session slow29 (issue 27: converted training scripts too slow). The causes met profiling the corpus's time-outs
(/work/notes/slow29.md), each with a test on real torch and real MindSpore, values compared to torch's own run (no
timing is asserted: benchmarks/training/speed.py compares speeds)."""
from __future__ import annotations

import numpy as np

from _harness import load_module
from test_fresh_causes import _convert

# An LSTM whose hidden-to-hidden weights get an exactly zero gradient (joaofilipedg/ocr_cnn_bilstm: a CNN's features
# as a sequence of one step from a zero state, bidirectional, 2 layers). torch hands weight_hh a zero gradient and
# Adam steps it (weight decay moves it). MindSpore's nn.LSTM keeps its weights in ParameterTuples (w_hh_list) in the
# Cell's __dict__, which the runtime's read tracking (Cell.__getattr__) never saw: a zero gradient of a Parameter not
# read was taken as "not reached", .grad stayed None, and each step held those 16 Parameters and their Adam state apart
# (32 tensor copies a step, 20 % of the port's time) while torch moved them. Now a called Cell's ParameterTuples count
# as read. The slice kept: 3 Adam steps with weight decay, every parameter against torch's.
ONE_STEP_LSTM = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0 = nn.Linear(8, 6)
        self.lstm = nn.LSTM(input_size=6, hidden_size=5, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(10, 3)

    def forward(self, x):
        h0 = torch.zeros(4, x.size(0), 5)
        c0 = torch.zeros(4, x.size(0), 5)
        out = self.fc0(x).reshape(x.size(0), 1, -1)
        out, _ = self.lstm(out, (h0, c0))
        return self.fc(out[:, -1, :])


def train(model, x, y, steps=3):
    opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.1)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    return losses
'''


def test_an_lstm_weight_with_an_exactly_zero_gradient_is_stepped_as_torch_steps_it():
    _steps_every_lstm_weight_as_torch()


def test_it_is_stepped_too_once_packed_sequences_are_loaded():
    """mindport.runtime.rnn (loaded by converted code that packs sequences, or earlier in the same process) wraps
    nn.LSTM's __call__ for PackedSequence inputs; the wrapper must still go through Cell.__call__ as patched while a
    forward is differentiated (it had bound the original once: weight_hh never stepped, found by the suite's order)."""
    import mindport.runtime.rnn  # noqa: F401  (installs the PackedSequence wrapper)

    _steps_every_lstm_weight_as_torch()


def _steps_every_lstm_weight_as_torch():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    code = _convert(ONE_STEP_LSTM)
    t_mod, m_mod = load_module(ONE_STEP_LSTM, "torch_one_step_lstm"), load_module(code, "ms_one_step_lstm")
    rng = np.random.RandomState(0)
    x = rng.randn(4, 8).astype(np.float32)
    y = np.array([0, 1, 2, 0], np.int64)
    torch.manual_seed(1)
    t_net, m_net = t_mod.Net(), m_mod.Net()
    transfer_weights({k: v.detach().clone() for k, v in t_net.state_dict().items()}, m_net)
    expected = t_mod.train(t_net, torch.tensor(x), torch.tensor(y))
    got = m_mod.train(m_net, ms.Tensor(x), ms.Tensor(y))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    want = {k: v.detach().numpy() for k, v in t_net.named_parameters()}
    have = {p.name: p.asnumpy() for p in m_net.trainable_params()}
    assert sorted(want) == sorted(have)
    for name in want:
        np.testing.assert_allclose(have[name], want[name], rtol=1e-4, atol=1e-6, err_msg=name)
