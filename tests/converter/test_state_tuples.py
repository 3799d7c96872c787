"""An LSTM state kept on self and carried from one call to the next (thesis/lstm's HAR_LSTM: ``lstm_out, self.hidden
= self.lstm(x, self.hidden)``, ``self.hidden`` set by ``init_hidden`` before the first call) compiles in GRAPH_MODE,
and where the graph differs from PyNative the MP107 says so. A graph failed to compile the tuple write ("For 'LSTM',
the 'hx' must be Tuple, but got 'Tensor[Float64]'", MindSpore 2.10; repro /work/notes/graph28-repros/lstm_w.py).
The line now binds a local and keeps it on self with ``mp_framework.keep_cache`` (PyNative only): PyNative carries the
state as torch does (second call = torch's second call); a graph reads the state ``self.hidden`` held when it was
compiled on every call (first call = torch's, second call = torch's first again), which the MP107 says. The slice:
the entry's statement shape, both modes, two calls each. Expected values are torch's outputs."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from port_check import load_module

HAR_LSTM = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class HARLSTM(nn.Module):
        def __init__(self, n_features=1, seq_length=6, n_hidden=8, n_layers=2):
            super().__init__()
            self.n_hidden = n_hidden
            self.n_layers = n_layers
            self.lstm = nn.LSTM(input_size=n_features, hidden_size=n_hidden, num_layers=n_layers, batch_first=True)
            self.linear = nn.Linear(n_hidden * seq_length, 1)

        def init_hidden(self, batch_size):
            hidden_state = torch.zeros(self.n_layers, batch_size, self.n_hidden)
            cell_state = torch.zeros(self.n_layers, batch_size, self.n_hidden)
            self.hidden = (hidden_state, cell_state)

        def forward(self, x):
            batch_size, seq_length, _ = x.size()
            lstm_out, self.hidden = self.lstm(x, self.hidden)
            x = lstm_out.contiguous().view(batch_size, -1)
            return self.linear(x)
""")


def test_state_written_through_a_local_and_said():
    result = convert_source(HAR_LSTM)
    assert "lstm_out, _mp_hidden = self.lstm(x, self.hidden)" in result.code, result.code
    assert 'mp_framework.keep_cache(self, "hidden", _mp_hidden)' in result.code, result.code
    said = [d for d in result.diagnostics if d.code == "MP107"]
    assert len(said) == 1 and "the value self.hidden held when it was compiled, on every call" in said[0].message


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_two_calls_against_torch(tmp_path, mode):
    import mindspore as ms
    import torch

    torch.manual_seed(0)
    torch_net = load_module(HAR_LSTM, tmp_path / "t_har.py", "t_har").HARLSTM().eval()
    ms_net = load_module(convert_source(HAR_LSTM).code, tmp_path / f"m_har_{mode}.py", f"m_har_{mode}").HARLSTM()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 6, 1)).astype(np.float32)
    torch_net.init_hidden(2)
    ms_net.init_hidden(2)
    with torch.no_grad():
        want = [torch_net(torch.from_numpy(x)).numpy() for _ in range(2)]
    assert not np.allclose(want[0], want[1])  # the state carried changes the second call
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = [ms_net(ms.Tensor(x)).asnumpy() for _ in range(2)]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    # PyNative carries the state as torch does; a graph reads the compiled-in state again (the MP107's words)
    np.testing.assert_allclose(got[1], want[1] if mode == "pynative" else want[0], rtol=1e-5, atol=1e-6)
