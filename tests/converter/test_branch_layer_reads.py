"""A torch member read on a name or attribute whose layer class is chosen by a branch (lucidrains'
product-key-memory: ``values = nn.EmbeddingBag(...)`` on one branch, ``nn.Embedding(...)`` on the other, then
``init_(values.weight)``). MindSpore keeps an Embedding's weight as ``embedding_table`` and an EmbeddingBag's (or a
Linear's) as ``weight``: the candidates disagree, so the read goes through ``mp_adapt.layer_attribute``, decided by
the object's class when ``__init__`` runs. Before, a local bound on two branches was not followed at all and an
attribute bound on two branches was left alone: ``values.weight`` on the MindSpore Embedding raised AttributeError
when the model was built."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def init_(t, dim=None):
        dim = dim if dim is not None else t.shape[-1]
        return nn.init.normal_(t, mean=0, std=1. / (dim ** 0.5))


    class Memory(nn.Module):
        def __init__(self, n=12, d=6, bag=False):
            super().__init__()
            if bag:
                values = nn.EmbeddingBag(n, d, mode='sum')
            else:
                values = nn.Embedding(n, d)
            self.values = values
            init_(values.weight)
            self.scale = values.weight.shape[-1] ** 0.5 + values.weight.shape[0]

        def forward(self, idx):
            return self.values(idx) * self.scale


    class Head(nn.Module):
        def __init__(self, n=12, d=6, tokens=True):
            super().__init__()
            self.inp = nn.Embedding(n, d) if tokens else nn.Linear(n, d)
            self.rows = self.inp.weight.shape[0]
            nn.init.uniform_(self.inp.weight, -0.1, 0.1)

        def forward(self, x):
            return self.inp(x) * self.rows


    def embedding_memory():
        return Memory(bag=False)


    def bag_memory():
        return Memory(bag=True)


    def token_head():
        return Head(tokens=True)


    def linear_head():
        return Head(tokens=False)
""")

INPUTS = {
    "embedding_memory": lambda rng: rng.integers(0, 12, (2, 5)),
    "bag_memory": lambda rng: rng.integers(0, 12, (2, 5)),
    "token_head": lambda rng: rng.integers(0, 12, (3, 4)),
    "linear_head": lambda rng: rng.standard_normal((3, 12)).astype(np.float32),
}


def test_disagreeing_reads_are_decided_by_class():
    code = convert_source(SOURCE).code
    assert "init_(mp_adapt.layer_attribute(values, 'weight'))" in code, code
    assert "self.rows = mp_adapt.layer_attribute(self.inp, 'weight').shape[0]" in code, code


@pytest.mark.parametrize("make", sorted(INPUTS))
def test_port_builds_and_matches_torch(tmp_path, make):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    torch_net = getattr(load_module(SOURCE, tmp_path / f"t_bl_{make}.py", f"t_bl_{make}"), make)().eval()
    ms_net = getattr(load_module(code, tmp_path / f"m_bl_{make}.py", f"m_bl_{make}"), make)()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = INPUTS[make](np.random.default_rng(0))
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    got = ms_net(ms.Tensor(x)).asnumpy()
    assert want.shape == got.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert float(ms_net.scale if hasattr(ms_net, "scale") else ms_net.rows) == float(
        torch_net.scale if hasattr(torch_net, "scale") else torch_net.rows)
