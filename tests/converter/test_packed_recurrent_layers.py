"""A recurrent layer called on a PackedSequence (DrQA's padded path: ``RNN_TYPES = {'lstm': nn.LSTM}`` builds its
layers from a dict, ``pack_padded_sequence`` packs the batch): MindSpore's nn.LSTM/GRU take a padded batch and
``seq_length``. Once the converted code loads ``mindport.runtime.rnn`` (it packs sequences), MindSpore's recurrent
Cells, and the runtime adapter class of ``nn.LSTM`` held as a value, take a PackedSequence as torch's do: output
packed again, final state at each sequence's last step, in the batch's order."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    TYPES = {"lstm": nn.LSTM, "gru": nn.GRU}


    class Reader(nn.Module):
        def __init__(self, kind):
            super().__init__()
            self.direct = nn.LSTM(4, 5, batch_first=True, bidirectional=True)
            self.held = TYPES[kind](10, 3, num_layers=2, bidirectional=True)

        def forward(self, x, lengths):
            packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            out, (h, c) = self.direct(packed)
            y, _ = pad_packed_sequence(out, batch_first=True)
            packed = pack_padded_sequence(y.transpose(0, 1), lengths, enforce_sorted=False)
            out2, h2 = self.held(packed)
            z, _ = pad_packed_sequence(out2)
            return z, h.sum(0) + c.sum(0)
""")


def test_dict_values_and_direct_calls_take_the_same_class():
    code = convert_source(SOURCE).code
    # GRU's value is the class its direct builds are (the runtime's GRU: a value class over it, timm53); LSTM's
    # builds are chosen when called (packed or not), so its value is bound when the dict is read
    assert 'TYPES = {"lstm": mp_adapt.api("torch.nn.LSTM"), "gru": TorchGRU}' in code, code
    assert "class TorchGRU(mp_nn.GRU, metaclass=TorchLayerType):" in code and "mp_nn.GRU(" in code, code
    assert "mp_rnn.pack_padded_sequence(" in code


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_the_port_matches(tmp_path, kind):
    x = np.random.default_rng(0).standard_normal((3, 6, 4)).astype(np.float32)
    lengths = np.array([4, 6, 2], np.int64)
    from port_check import load_module
    import mindspore as ms
    import torch
    from mindport import transfer_weights

    code = convert_source(SOURCE).code
    t_net = load_module(SOURCE, tmp_path / f"t_packed_{kind}.py", f"t_packed_{kind}").Reader(kind).eval()
    m_net = load_module(code, tmp_path / f"m_packed_{kind}.py", f"m_packed_{kind}").Reader(kind)
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    want = t_net(torch.tensor(x), torch.tensor(lengths))
    got = m_net(ms.Tensor(x), ms.Tensor(lengths))
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.asnumpy(), w.detach().numpy(), atol=1e-5, rtol=1e-5)
