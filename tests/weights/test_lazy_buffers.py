"""Buffers a model registers on its first forward (batch 8's pytorch-generative: a base class's ``__call__`` sets
``self._c/_h/_w`` from the first image's shape; its own ``load_state_dict`` creates them before loading, so a fresh
torch model takes the checkpoint). The converted model has them only after a forward, and ``transfer_weights`` refused
the checkpoint (MP301 "torch key _c matches no MindSpore parameter"). A key whose Cell lacks the attribute and whose
own class code assigns it is created as the buffer that code would create; a key no code of the model sets stays an
error."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source, transfer_weights
from mindport.errors import MigrationError
from tests.source_module import load_source

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Generative(nn.Module):
        def __call__(self, x, *args, **kwargs):
            if getattr(self, "_c", None) is None and x.dim() == 4:
                _, c, h, w = x.shape
                self._create_shape_buffers(c, h, w)
            return super().__call__(x, *args, **kwargs)

        def load_state_dict(self, state_dict, strict=True):
            if "_c" in state_dict and not getattr(self, "_c", None):
                self._create_shape_buffers(state_dict["_c"], state_dict["_h"], state_dict["_w"])
            return super().load_state_dict(state_dict, strict)

        def _create_shape_buffers(self, c, h, w):
            self.register_buffer("_c", torch.as_tensor(c))
            self.register_buffer("_h", torch.as_tensor(h))
            self.register_buffer("_w", torch.as_tensor(w))


    class Net(Generative):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3, padding=1)

        def forward(self, x):
            return self.conv(x) * self._h
""")


def test_buffers_made_on_the_first_forward_are_transferred(tmp_path):
    import mindspore as ms
    import torch

    torch_net = load_source(SOURCE, tmp_path, "lazy_t").Net().eval()
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 4)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    state = torch_net.state_dict()
    assert {"_c", "_h", "_w"} <= state.keys()
    fresh = load_source(SOURCE, tmp_path, "lazy_t2").Net()
    fresh.load_state_dict(state)  # torch: the model's own override takes its checkpoint

    code = convert_source(SOURCE).code
    ms_net = load_source(code, tmp_path, "lazy_m").Net()
    ms_net.set_train(False)
    transfer_weights(state, ms_net)
    assert int(ms_net._h.asnumpy()) == 5 and int(ms_net._w.asnumpy()) == 4
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_a_key_no_code_of_the_model_sets_stays_an_error(tmp_path):
    import torch

    torch_net = load_source(SOURCE, tmp_path, "lazy_t3").Net()
    state = dict(torch_net.state_dict())
    state["_scale"] = torch.ones(())  # nothing in the model assigns self._scale
    ms_net = load_source(convert_source(SOURCE).code, tmp_path, "lazy_m3").Net()
    with pytest.raises(MigrationError, match="_scale"):
        transfer_weights(state, ms_net)
