"""``lstm._all_weights`` (torch's per-layer, per-direction parameter names, read by older code to initialise an RNN
by name: atulkum/pointer_summarizer's ``init_lstm_wt``): MindSpore's LSTM/GRU/RNN keep the same parameter names but
no such list ("'LSTM' object has no attribute '_all_weights'"). Read by the layer's class
(``mp_adapt.layer_attribute``), it is torch's list, and the init loop sets the same parameters as in torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mindport.migrator import convert_source
from port_check import load_module

SOURCE = '''
import torch
import torch.nn as nn


def init_rnn(rnn):
    for names in rnn._all_weights:
        for name in names:
            if name.startswith('weight_'):
                getattr(rnn, name).data.uniform_(-0.02, 0.02)
            elif name.startswith('bias_'):
                bias = getattr(rnn, name)
                n = bias.size(0)
                bias.data.fill_(0.)
                bias.data[n // 4:n // 2].fill_(1.)


class Enc(nn.Module):
    def __init__(self, kind, layers, bidirectional):
        super().__init__()
        self.rnn = getattr(nn, kind)(4, 8, num_layers=layers, batch_first=True, bidirectional=bidirectional)
        init_rnn(self.rnn)


def names(rnn):
    return rnn._all_weights
'''


@pytest.mark.parametrize("kind,layers,bidirectional", [("LSTM", 2, True), ("GRU", 1, False), ("RNN", 2, False)])
def test_all_weights_names_and_init_loop_match_torch(kind, layers, bidirectional, tmp_path):
    code = convert_source(SOURCE, "enc.py").code
    assert "_all_weights')" in code  # read by the layer's class at run time
    tm = load_module(SOURCE, tmp_path / f"t_aw_{kind}.py", f"t_aw_{kind}")
    mm = load_module(code, tmp_path / f"m_aw_{kind}.py", f"m_aw_{kind}")
    t, m = tm.Enc(kind, layers, bidirectional), mm.Enc(kind, layers, bidirectional)
    assert mm.names(m.rnn) == tm.names(t.rnn)
    ms_params = {p.name.split(".")[-1]: p.asnumpy() for p in m.get_parameters()}
    for name, value in t.rnn.named_parameters():
        got = ms_params[name]
        if name.startswith("bias_"):
            np.testing.assert_array_equal(got, value.detach().numpy())
        else:
            assert got.shape == tuple(value.shape) and np.abs(got).max() <= 0.02 and np.abs(got).max() > 0.01
