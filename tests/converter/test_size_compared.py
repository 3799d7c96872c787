"""``assert reconstruction.size() == torch.Size([batch_size, self.n])`` in a forward (cedrickchee/capsule-net-pytorch's
Decoder, batch 26): the torch.Size stayed the runtime's tuple subclass, which a static graph cannot build, so the
model failed GRAPH_MODE ("torch.Size is a plain tuple inside construct"). Class: a torch.Size only compared with
``==`` / ``!=`` asks nothing more of it than of a tuple (SizeTupleTransform makes it ``tuple(...)``); one whose
numel() is read keeps the runtime class (the rule's example)."""
from __future__ import annotations

import textwrap

import numpy as np
import torch

from mindport import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self, n=6):
            super().__init__()
            self.n = n
            self.fc = nn.Linear(4, n)

        def forward(self, x):
            out = torch.sigmoid(self.fc(x))
            assert out.size() == torch.Size([x.size(0), self.n])
            if torch.Size([x.size(0), self.n]) != out.shape:
                out = out * 0
            return out
""")


def test_compared_size_is_a_tuple_in_graph_mode(tmp_path):
    import mindspore as ms
    code = convert_source(SOURCE).code
    assert "assert out.shape == tuple([" in code and "!= out.shape" in code, code
    assert "mp_tensor.Size" not in code, code
    torch.manual_seed(0)
    reference = load_module(SOURCE, tmp_path / "head_torch.py", "head_torch").Head()
    port = load_module(code, tmp_path / "head_ms.py", "head_ms").Head()
    for name in ("weight", "bias"):
        getattr(port.fc, name).set_data(ms.Tensor(getattr(reference.fc, name).detach().numpy()))
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        want = reference(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = port(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
