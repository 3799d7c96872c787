"""torch's grad-mode decorators applied by hand (batch 9b's BiDAF recipe builds the model as
``torch.no_grad()(lambda: BiDAF(args, torch.arange(240.).reshape(30, 8).sin()))()``: its LSTM init writes into a
Parameter view, which torch refuses while recording). The statement stayed torch's (MP103, no half-converted line),
so the MindSpore program was handed a torch tensor ("the type of 'input_data' ... got type 'Tensor'"). MindSpore
records nothing outside a gradient function: ``torch.no_grad()(fn)`` (and ``inference_mode``/``enable_grad``) is
``fn``; a lambda keeps its parentheses, as ``(lambda: m)()``."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import transfer_weights
from port_check import torch_and_converted

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, table):
            super().__init__()
            self.emb = nn.Embedding.from_pretrained(table, freeze=True)
            self.fc = nn.Linear(table.shape[1], 3)

        def forward(self, ids):
            return self.fc(self.emb(ids))


    def scale(x):
        return x * 2


    def build():
        return torch.no_grad()(lambda: Net(torch.arange(24, dtype=torch.float32).reshape(6, 4).div(24).sin()))()


    def run(m, ids):
        return torch.inference_mode()(scale)(m(ids))
""")


def test_grad_decorator_applied_by_hand_is_the_function(tmp_path, monkeypatch):
    import mindspore as ms
    import torch

    t_ns, m_ns = torch_and_converted(SOURCE, "grad_wrapper_call", tmp_path, monkeypatch)
    code = (tmp_path / "grad_wrapper_call_ms.py").read_text()
    assert "no_grad" not in code and "inference_mode" not in code and "(lambda:" in code, code
    torch.manual_seed(0)
    t_net = t_ns["build"]().eval()
    m_net = m_ns["build"]()
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    ids = np.array([[0, 5, 2], [3, 3, 1]], dtype=np.int64)
    want = t_ns["run"](t_net, torch.from_numpy(ids)).detach().numpy()
    got = m_ns["run"](m_net, ms.Tensor(ids)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the pretrained table was built by the converted program itself, not moved by transfer_weights
    np.testing.assert_allclose(m_net.emb.embedding_table.asnumpy() if hasattr(m_net.emb, "embedding_table")
                               else m_net.emb.weight.asnumpy(), t_net.emb.weight.numpy(), rtol=1e-6, atol=1e-7)
