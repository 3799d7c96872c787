"""Session train17 (issue 27): causes of the training corpus's failures on integ17, each against real torch and real
MindSpore."""
from __future__ import annotations

import numpy as np

from test_fresh_causes import _convert, _run_boot

STACKED_LSTM = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(10, 4, num_layers=2)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        out, _ = self.gru(out)
        return self.head(out)


model = Net()
optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(6, 2, 3)
print([round(v, 6) for v in model(x).reshape(-1).tolist()])
'''


def test_the_tracker_gives_stacked_recurrent_layers_torchs_weights(tmp_path):
    """jessicayung/lstm_ar (deterministic entry): a 2-layer nn.LSTM. MindSpore's nn.RNN/LSTM/GRU list their
    parameters by kind (weight_ih_l0, weight_ih_l1, weight_hh_l0, ...), torch's by layer and direction
    (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_ih_l1, ...): the tracker (benchmarks/training/boot.py)
    paired them by position and stopped ("track: parameter lstm.weight_hh_l0 is (128, 32) in MindSpore, (128,) in
    torch"). It now pairs each layer's parameters in torch's order: the same weights give torch's outputs."""
    t = _run_boot(tmp_path, "torch", "track", STACKED_LSTM)
    m = _run_boot(tmp_path, "mindspore", "track", _convert(STACKED_LSTM))
    np.testing.assert_allclose(eval(m), eval(t), rtol=1e-4, atol=1e-5)
