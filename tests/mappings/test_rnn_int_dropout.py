"""nn.LSTM/GRU/RNN(dropout=0): torch takes an int, MindSpore refuses anything but a float ("the type of 'dropout'
must be 'float'"): literal or variable, the converted layer builds and matches torch."""
from __future__ import annotations

import numpy as np
import pytest

from mindport.migrator import convert_source
from mindport.migrator.weights import transfer_weights


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("dropout", ["0", "n"])
def test_int_dropout_builds_and_matches(layer, dropout):
    import mindspore as ms
    import torch

    source = f"import torch\n\n\ndef build(n=0):\n    return torch.nn.{layer}(4, 5, 2, batch_first=True, dropout={dropout})\n"
    result = convert_source(source, "<rnn>")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), t_ns)  # noqa: S102 - our own snippets
    exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
    t_layer, m_layer = t_ns["build"]().eval(), m_ns["build"]()
    m_layer.set_train(False)
    transfer_weights(t_layer.state_dict(), m_layer)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    with torch.no_grad():
        want = t_layer(torch.tensor(x))[0].numpy()
    np.testing.assert_allclose(m_layer(ms.Tensor(x))[0].asnumpy(), want, rtol=1e-4, atol=1e-5)
