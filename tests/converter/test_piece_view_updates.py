"""An in-place update of one piece of a parameter's split (batch 9b's BiDAF LSTM wrapper:
``getattr(self.rnn, f'bias_hh_l{i}').chunk(4)[1].fill_(1)``, the forget-gate bias): torch's ``chunk``/``split``/
``unbind`` pieces are views, MindSpore's copies. The statement was flagged MP102 and left as torch's, and MindSpore's
``Tensor.fill_`` then failed at build ("The kernel InplaceFillScalar unregistered"). An indexed piece is a step of a
view chain (mindport/mappings/views.py PIECE_METHODS), written back into the parameter by
``mp_inplace.view_update``: the parameter after the constructor equals torch's."""
from __future__ import annotations

import textwrap

import numpy as np

from port_check import torch_and_converted

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(input_size=4, hidden_size=3, bidirectional=True)
            self.fc = nn.Linear(5, 7)
            with torch.no_grad():
                for i in range(self.rnn.num_layers):
                    nn.init.constant_(getattr(self.rnn, f'bias_hh_l{i}'), 0)
                    nn.init.constant_(getattr(self.rnn, f'bias_ih_l{i}'), 0.25)
                    nn.init.constant_(getattr(self.rnn, f'weight_hh_l{i}_reverse'), 0.5)
                    getattr(self.rnn, f'bias_hh_l{i}').chunk(4)[1].fill_(1)
                nn.init.constant_(self.fc.weight, 1.5)
                nn.init.constant_(self.fc.bias, -1.0)
                self.fc.weight.data.split([2, 3], 1)[1].mul_(0)
                self.fc.bias.chunk(3, 0)[2].add_(5)
                self.rnn.weight_hh_l0_reverse.unbind(1)[2].fill_(-2)
                self.rnn.bias_ih_l0.chunk(5)[3].zero_()

        def forward(self, x):
            return self.fc(x)
""")


def test_an_update_of_one_piece_of_a_split_reaches_the_parameter(tmp_path, monkeypatch):
    t_ns, m_ns = torch_and_converted(SOURCE, "piece_view_updates", tmp_path, monkeypatch)
    want = {k: v.detach().numpy() for k, v in t_ns["Wrapper"]().named_parameters()}
    got = {p.name: p.asnumpy() for p in m_ns["Wrapper"]().get_parameters()}
    for name in ("rnn.bias_hh_l0", "rnn.bias_ih_l0", "rnn.weight_hh_l0_reverse", "fc.weight", "fc.bias"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    assert len(np.unique(want["fc.bias"])) == 2 and len(np.unique(want["rnn.bias_hh_l0"])) == 2  # updates happened
