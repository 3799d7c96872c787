"""``spectral_norm(nn.Embedding(...))`` / ``weight_norm(nn.Embedding(...))``: torch's parameter name ``weight`` is the
Cell's ``embedding_table`` in MindSpore, so the reparametrization crashed at construction ("'Embedding' object has no
attribute 'weight'", pytorch.sngan_projection's projection discriminator). The reparametrized Cell computes its own
parameter (what its construct reads) and torch's name from the same ``weight_orig``/``weight_u``/``weight_v`` (or
``weight_g``/``weight_v``) Parameters, named as torch's checkpoint entries; remove_* gives the Cell its own parameter
back. Values against torch with the same weights, in training (power iteration) and eval. (A read of the weight
besides the layer's own call steps the power iteration again in training, unlike torch's once-per-forward hook: the
runtime's documented difference.)"""
from __future__ import annotations

import mindspore as ms
import numpy as np
import torch

from mindport import transfer_weights
from mindport.migrator import convert_source
from port_check import load_module

SOURCE = '''
import torch
import torch.nn as nn
from torch.nn import utils


class Projection(nn.Module):
    def __init__(self):
        super().__init__()
        self.l_y = utils.spectral_norm(nn.Embedding(10, 6))
        self.g = utils.weight_norm(nn.Embedding(10, 6))
        self.fc = utils.spectral_norm(nn.Linear(6, 6))
        self.plain = utils.remove_weight_norm(utils.weight_norm(nn.Embedding(10, 6)))

    def forward(self, x, y):
        h = self.fc(x)
        return (h * self.l_y(y)).sum(1) + (h * self.g(y)).sum(1) + self.plain(y).sum(1)
'''


def test_spectral_and_weight_norm_of_an_embedding_match_torch(tmp_path):
    code = convert_source(SOURCE, "proj.py").code
    tm = load_module(SOURCE, tmp_path / "t_proj.py", "t_proj")
    mm = load_module(code, tmp_path / "m_proj.py", "m_proj")
    torch.manual_seed(0)
    t = tm.Projection()
    m = mm.Projection()
    state = t.state_dict()
    assert {"l_y.weight_orig", "l_y.weight_u", "l_y.weight_v", "g.weight_g", "g.weight_v"} <= set(state)
    transfer_weights(state, m)
    names = {p.name for p in m.get_parameters()}
    assert {"l_y.weight_orig", "g.weight_g", "plain.embedding_table"} <= names, names
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = rng.integers(0, 10, (4,))
    for train in (False, True):
        t.train(train)
        m.set_train(train)
        expected = t(torch.from_numpy(x), torch.from_numpy(y)).detach().numpy()
        got = m(ms.Tensor(x), ms.Tensor(y)).asnumpy()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    t.eval()
    m.set_train(False)  # torch's name reads the normalised weight (eval: no power-iteration step on reading)
    np.testing.assert_allclose(m.l_y.weight.asnumpy(), t.l_y.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.l_y.embedding_table.asnumpy(), t.l_y.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
