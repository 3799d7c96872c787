"""A module's ``state_dict()`` read by a key from ``named_parameters()``: torch's names (a LayerNorm's and a
BatchNorm's ``weight``/``bias``, an Embedding's ``weight``), which the Cell's own ``state_dict`` keys by MindSpore's
(``gamma``/``beta``, ``embedding_table``): kekmodel/FixMatch's EMA (``esd[k].copy_(esd[k] * decay + (1 - decay) *
msd[k])`` for each ``k`` of ``ema.named_parameters()``) raised KeyError ``'...bn1.weight'``. Such a ``state_dict()``
(its result subscripted, ``.get`` or ``in``) is ``mindport.runtime.layers.state_dict``: the Cell's own keys and
order, torch's names answered too; a ``state_dict()`` only saved stays the Cell's own. Run against torch: the EMA's
weights after two updates equal torch's."""
from __future__ import annotations

import copy
import textwrap

import numpy as np

from mindport import transfer_weights

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.bn = nn.BatchNorm1d(4)
            self.norm = nn.LayerNorm(4)
            self.emb = nn.Embedding(5, 4)

        def forward(self, x, ids):
            return self.norm(self.bn(self.fc(x))) + self.emb(ids)


    def ema_update(model, ema, decay=0.9):
        keys = [k for k, _ in ema.named_parameters()]
        with torch.no_grad():
            msd = model.state_dict()
            esd = ema.state_dict()
            for k in keys:
                esd[k].copy_(esd[k] * decay + (1 - decay) * msd[k])
        return sorted(k for k in keys if k in esd), esd.get("norm.weight") is not None


    def save(model, path):
        torch.save(model.state_dict(), path)
""")


def test_state_dict_read_by_key_answers_torch_names(tmp_path, monkeypatch):
    from mindport import convert_source
    from tests.converter.port_check import torch_and_converted

    code = convert_source(SOURCE, "ema.py").code
    assert "msd = mp_nn.state_dict(model)" in code and "esd = mp_nn.state_dict(ema)" in code, code
    assert "mp_checkpoint.save(model.state_dict(), path)" in code, code  # only saved: the Cell's own

    t_ns, m_ns = torch_and_converted(SOURCE, "ema52", tmp_path, monkeypatch)
    import mindspore as ms
    import torch

    torch.manual_seed(0)
    t_model = t_ns["Net"]()
    for p in t_model.parameters():  # no layer near its initial value (LayerNorm's ones, BatchNorm's zeros)
        torch.nn.init.normal_(p, std=1.0)
    t_ema = copy.deepcopy(t_model)
    for p in t_ema.parameters():
        torch.nn.init.normal_(p, std=1.0)
    m_model, m_ema = m_ns["Net"](), m_ns["Net"]()
    transfer_weights(t_model.state_dict(), m_model)
    transfer_weights(t_ema.state_dict(), m_ema)

    for _ in range(2):
        t_keys = t_ns["ema_update"](t_model, t_ema)
        m_keys = m_ns["ema_update"](m_model, m_ema)
    assert m_keys == t_keys and t_keys[1] is True
    assert len(t_keys[0]) == 7
    got = {k: v.asnumpy() for k, v in m_ns["mp_nn"].state_dict(m_ema).items()}
    assert set(got) == set(m_ema.state_dict())  # the write back adds no key under torch's name
    from mindport.runtime import containers

    for name, param in containers.named_parameters(m_ema):
        want = t_ema.state_dict()[name].numpy()
        np.testing.assert_allclose(param.asnumpy(), want, rtol=1e-6, atol=1e-7, err_msg=name)
    ms.set_context(mode=ms.PYNATIVE_MODE)
