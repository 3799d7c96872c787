"""``super()`` in the runtime's own Cells under GRAPH_MODE (issue 26).

MindSpore compiles a zero-argument ``super()`` as ``super(type(self), self)``: the runtime's losses wrap MindSpore's
(``CrossEntropyLoss.construct`` calls the base's and fixes the empty batch), so a model's own loss subclass that does
not override construct (``class Smooth(nn.CrossEntropyLoss)`` with an ``__init__`` only, converted to a subclass of
``mp_adapt.api("torch.nn.CrossEntropyLoss")``) called the runtime's construct for ever in GRAPH_MODE ("Exceed
function call depth limit 1000"). The runtime writes ``super(CrossEntropyLoss, self)``. weight_norm's subclass has
its own name now (GRAPH_MODE finds ``super(A, self)``'s ``A`` by name in the MRO); ``type(m).__name__`` converted still
reads torch's class name.
"""
from __future__ import annotations

import numpy as np
import pytest

from mindport.runtime import adapt as mp_adapt
from mindport.runtime import layers as mp_nn

LOSSES = {  # torch class, its arguments, integer targets
    "CrossEntropyLoss": ({"label_smoothing": 0.1}, True),
    "NLLLoss": ({}, True),
    "MSELoss": ({"reduction": "sum"}, False),
    "SmoothL1Loss": ({"beta": 0.5}, False),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_a_loss_subclass_without_construct_compiles_and_matches_torch(name):
    import mindspore as ms
    import torch

    kwargs, int_target = LOSSES[name]
    base = mp_adapt.api(f"torch.nn.{name}")

    class Own(base):  # a model's loss: only __init__, as converted code writes it
        def __init__(self):
            super().__init__(**kwargs)

    class Step(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.loss = Own()

        def construct(self, x, y):
            return self.loss(x, y)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    if name == "NLLLoss":
        x = np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True)).astype(np.float32)
    y = rng.integers(0, 5, 4).astype(np.int64) if int_target else rng.standard_normal((4, 5)).astype(np.float32)
    want = getattr(torch.nn, name)(**kwargs)(torch.from_numpy(x), torch.from_numpy(y)).item()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = Step()(ms.Tensor(x), ms.Tensor(y)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_weight_norm_keeps_torch_class_name():
    layer = mp_nn.weight_norm(mp_adapt.api("torch.nn.Linear")(4, 3))
    assert mp_adapt.class_name(layer) == "Linear"  # torch: type(m).__name__ is unchanged by weight_norm
    both = mp_nn.spectral_norm(mp_nn.weight_norm(mp_adapt.api("torch.nn.Conv2d")(4, 3, 3)), name="bias")
    assert mp_adapt.class_name(both) == "Conv2d"
    assert type(both).__name__ != "Conv2d"  # GRAPH_MODE's super(Conv2d, self) must not find the subclass
