"""``lstm._all_weights`` (torch's per-layer, per-direction parameter names, read by older code to initialise an RNN
by name: atulkum/pointer_summarizer's ``init_lstm_wt``): MindSpore's LSTM/GRU/RNN keep the same parameter names but
no such list ("'LSTM' object has no attribute '_all_weights'"). Read by the layer's class
(``mp_adapt.layer_attribute``), it is torch's list, and the init loop sets the same parameters as in torch."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from mindport.migrator import convert_source
from port_check import assert_port_matches_in_mode, load_module

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


# torch's ``all_weights`` / ``mode`` / ``nonlinearity`` / ``proj_size`` (object_surface.toml's ``derived`` and ``kept``
# rows of LSTM, GRU, RNN). bamtercelboo's Highway BiLSTM (batch15, first contact) initialises its LSTM through
# ``self.bilstm.all_weights[layer][k]`` (xavier on the matrices, ``.data[a:b].fill_(v)`` on bias slices): the member
# was flagged MP104 and the converted model failed to build. Now it is the layer's own Parameters in torch's order (per
# layer and direction: weight_ih, weight_hh, bias_ih, bias_hh), so writes through it reach the layer.
WEIGHTS_SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.{cls}(4, 5, num_layers=2, bidirectional=True, batch_first=True{extra})
            if self.rnn.bias:
                self.rnn.all_weights[0][3].data[0:5].fill_(1)
                self.rnn.all_weights[1][2].data[5:10].fill_(-0.5)
            self.rnn.all_weights[0][1].data.fill_(0.1)
            self.shape = [[tuple(p.shape) for p in w] for w in self.rnn.all_weights]
            self.kind = (self.rnn.mode, self.rnn.proj_size{nl})

        def forward(self, x):
            out, _ = self.rnn(x)
            return out
""")


@pytest.mark.parametrize("cls,extra,nl", [("LSTM", "", ""), ("GRU", ", bias=False", ""),
                                          ("RNN", ", nonlinearity='relu'", ", self.rnn.nonlinearity")])
def test_all_weights_reach_the_layer(cls, extra, nl, tmp_path):
    source = WEIGHTS_SOURCE.format(cls=cls, extra=extra, nl=nl)
    result = convert_source(source)
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    t_net = load_module(source, tmp_path / "t_rnn.py", f"t_rnn_{cls}").Net()
    m_net = load_module(result.code, tmp_path / "m_rnn.py", f"m_rnn_{cls}").Net()
    assert m_net.shape == t_net.shape and tuple(m_net.kind) == tuple(t_net.kind)
    names = [n for n, _ in t_net.rnn.named_parameters() if n in ("bias_hh_l0", "bias_ih_l0_reverse", "weight_hh_l0")]
    params = dict(m_net.rnn.parameters_and_names())
    for name in names:
        t_value = dict(t_net.rnn.named_parameters())[name].detach().numpy()
        m_value = next(p for n, p in params.items() if n.endswith(name)).asnumpy()
        written = {"weight_hh_l0": slice(None), "bias_hh_l0": slice(0, 5), "bias_ih_l0_reverse": slice(5, 10)}[name]
        # only what was written is torch's constant (the rest is each side's own random init)
        np.testing.assert_array_equal(m_value[written], t_value[written])
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    assert_port_matches_in_mode(source, result.code, "Net", [x], tmp_path, f"rnn_{cls}", "pynative", atol=1e-5)
