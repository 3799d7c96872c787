"""``self.stem[i + 1].weight`` outside ``forward``: an item of the model's own container at an index the text does not
fix is a Conv2d (``weight``) or a BatchNorm2d (MindSpore's ``gamma``) only when the code runs. SelecSLS's
``prune_and_fuse`` (batch15, first contact) walks conv/bn/relu triples that way: ``.weight`` stayed as written and
MindSpore's BatchNorm2d has no such attribute. Now it is read by the object's class (mp_adapt.layer_attribute);
a literal index keeps the static rename."""
from __future__ import annotations

import textwrap

import numpy as np
import torch

from mindport import convert_source, transfer_weights
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                                      nn.Conv2d(4, 5, 1), nn.BatchNorm2d(5), nn.ReLU())

        def gammas(self):
            out = []
            for i in range(0, len(self.stem), 3):
                out.append(abs(self.stem[i + 1].weight) > 0.5)
                out.append(self.stem[i + 1].bias * 2)
                out.append(self.stem[i].weight.sum())
            out.append(self.stem[1].weight)
            return out

        def forward(self, x):
            return self.stem(x)
""")


def test_an_item_at_a_computed_index_reads_by_its_class(tmp_path):
    code = convert_source(SOURCE).code
    assert "layer_attribute(self.stem[i + 1], 'weight')" in code and "self.stem[1].gamma" in code, code
    t_net = load_module(SOURCE, tmp_path / "t_idx.py", "t_idx").Net()
    with torch.no_grad():
        for m in t_net.stem:
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(-1, 1)
                m.bias.uniform_(-1, 1)
    m_net = load_module(code, tmp_path / "m_idx.py", "m_idx").Net()
    transfer_weights(t_net.state_dict(), m_net)
    with torch.no_grad():
        want = [t.numpy() for t in t_net.gammas()]
    got = [g.asnumpy() for g in m_net.gammas()]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
