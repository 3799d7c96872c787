"""Causes found by the training corpus's first contact with four more repositories (benchmarks/training/fresh44.json):
one test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's, run
here."""
from __future__ import annotations

import numpy as np

from test_fresh18_causes import _run_in_folder

# gyuwon12/DeepLearning-basic-study's Encoder-Decoder/models.py initialises a recurrent layer by torch's private
# name list, d2l's idiom: ``for name in module._flat_weights_names: if "weight" in name:
# nn.init.xavier_uniform_(module._parameters[name])``, applied to the model through ``self.apply(init)``. MindSpore's
# GRU keeps torch's parameter names but no such list: the port stopped before training (AttributeError: The 'GRU'
# object has no attribute '_flat_weights_names'.). torch's ``_flat_weights_names`` / ``_flat_weights`` of an
# RNN/GRU/LSTM are now derived members of the layer (the surface table), read by the layer's class at run time.
FLAT_WEIGHTS = '''
import torch
import torch.nn as nn


def init_recurrent(module):
    if type(module) == nn.GRU or type(module) == nn.LSTM:
        for name in module._flat_weights_names:
            if "weight" in name:
                nn.init.xavier_uniform_(module._parameters[name])


class Tagger(nn.Module):
    def __init__(self, kind, layers, bidirectional):
        super().__init__()
        self.rnn = getattr(nn, kind)(3, 5, layers, bidirectional=bidirectional)
        self.out = nn.Linear(5 * (2 if bidirectional else 1), 2)
        self.apply(init_recurrent)

    def forward(self, x):
        h = self.rnn(x)[0]
        return self.out(h)


torch.manual_seed(0)
x = torch.sin(torch.arange(72.0) * 0.7).reshape(6, 4, 3)
y = (x.sum(-1) > 0).long()
for kind, layers, bidirectional in (("GRU", 2, True), ("LSTM", 1, False)):
    model = Tagger(kind, layers, bidirectional)
    names = model.rnn._flat_weights_names
    flat = model.rnn._flat_weights
    print("step", len(names), len(flat), sum(float(w.sum()) for w in flat) * 0.0)
    with torch.no_grad():
        for i, name in enumerate(names):  # deterministic weights both sides share, in torch's order
            w = model.rnn._parameters[name]
            w.copy_(torch.linspace(-0.3, 0.3, w.numel()).reshape(w.shape) * (1 + 0.1 * i))
        model.out.weight.copy_(torch.linspace(-0.5, 0.5, model.out.weight.numel()).reshape(model.out.weight.shape))
        model.out.bias.fill_(0.0)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x).reshape(-1, 2), y.reshape(-1))
        loss.backward()
        opt.step()
        print("step", loss.item())
'''


def _convert_and_run(tmp_path, source):
    from mindport import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(source)
    convert_path(src, out, jobs=1)
    code = (out / "main.py").read_text()
    return _run_in_folder(src), _run_in_folder(out), code


def test_a_recurrent_layer_initialised_through_its_flat_weights_names(tmp_path):
    t, m, code = _convert_and_run(tmp_path, FLAT_WEIGHTS)
    assert "import torch" not in code, code
    assert len(t) == len(m) == 12, (t, m, code)
    assert t[0][:2] == [16.0, 16.0] and t[6][:2] == [4.0, 4.0]
    np.testing.assert_allclose(np.concatenate(m), np.concatenate(t), rtol=1e-4, atol=1e-6)
    assert t[5][0] < t[1][0] and t[11][0] < t[7][0]
