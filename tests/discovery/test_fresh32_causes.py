"""Causes met on first contact with new repositories this session (fresh32: `mindport migrate REPO` with no
settings), each a class with a test of our own. Expected values come from torch."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import torch

GATE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Gate(nn.Module):
        def __init__(self, size, f):
            super().__init__()
            self.fc = nn.Linear(size, size)
            self.f = f

        def forward(self, x):
            return self.f(self.fc(x)) * torch.sigmoid(x)
""")


def test_a_function_handed_to_the_constructor_compiles_in_graph_mode(tmp_path, monkeypatch):
    """kefirski/pytorch_RVAE's ``Highway(size, num_layers, f)`` is built by the repository with ``f=F.relu``; the
    converted constructor text defines the function it hands over (``def torch_relu``) and ran it with ``exec``
    of a string: PyNative matched, GRAPH_MODE could not read the function's source ("Mindspore can not compile
    temporary source code in terminal") and the class was ms-failed."""
    from mindport import transfer_weights
    from mindport.discovery.prove import ms_ctor
    from mindport.migrator import convert_source
    from mindport.validators.parity.loading import build_model

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t").mkdir()
    (tmp_path / "m").mkdir()
    (tmp_path / "t" / "gate.py").write_text(GATE)
    (tmp_path / "m" / "gate.py").write_text(convert_source(GATE, "gate.py").code)
    ctor = "size=5, f=F.relu"
    t_model = build_model(f"{tmp_path / 't' / 'gate.py'}:Gate", ctor).eval()
    text = ms_ctor(ctor)
    assert "def torch_relu" in text or "ops.relu" in text, text
    m_model = build_model(f"{tmp_path / 'm' / 'gate.py'}:Gate", text)
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = m_model(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
