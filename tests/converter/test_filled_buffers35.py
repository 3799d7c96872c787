"""A persistent buffer registered empty and filled later in ``__init__`` (first contact, session 35: JunyuanHe/
my-AI-roadmap's RoPE attention, ``register_buffer("rope_sin", None)`` then ``self.rope_sin = sin``): torch stores the
value as the buffer (it is in the state_dict); the port held a plain attribute, and moving the weights failed ("torch
tensors unmatched: rope_sin, rope_cos"). Now it is the buffer's frozen Parameter; one left empty stays None."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def cache(n, d):
        pos = torch.arange(n).float()[:, None] / (10 ** (torch.arange(d).float() / d))
        return pos.sin(), pos.cos()


    class Rope(nn.Module):
        def __init__(self, n=8, d=4):
            super().__init__()
            self.register_buffer("sin", None)
            self.register_buffer("cos", None)
            self.register_buffer("unused", None)
            sin, cos = cache(n, d)
            self.sin = sin
            self.cos = cos
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return self.fc(x * self.cos[: x.shape[1]] + x.flip(-1) * self.sin[: x.shape[1]])
    """)


def test_the_filled_buffers_are_in_the_state_dict_and_move():
    code = convert_source(SOURCE, "rope35.py").code
    assert 'self.sin = mp_containers.buffer(sin, "sin")' in code and "self.unused = None" in code, code
    assert sorted(torch_state(SOURCE)) == ["cos", "fc.bias", "fc.weight", "sin"]


def torch_state(source):
    namespace: dict = {}
    exec(compile(source, "rope35_torch.py", "exec"), namespace)  # noqa: S102 - the test's own program
    return namespace["Rope"]().state_dict()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_matches_with_the_buffers_moved(tmp_path, mode, monkeypatch):
    """The torch buffers are changed before they move: the port's numbers come from them, not from its own cache."""
    import importlib

    import mindspore as ms
    import torch

    from mindport import transfer_weights

    code = convert_source(SOURCE, "rope35.py").code
    (tmp_path / f"rope35_{mode}.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict = {}
    exec(compile(SOURCE, "rope35_torch.py", "exec"), namespace)  # noqa: S102 - the test's own program
    torch_net = namespace["Rope"]().eval()
    with torch.no_grad():
        torch_net.sin.mul_(3).add_(1)
        torch_net.cos.mul_(-2)
    ms_net = importlib.import_module(f"rope35_{mode}").Rope()
    ms_net.set_train(False)
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(4).standard_normal((2, 6, 4)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = ms_net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
