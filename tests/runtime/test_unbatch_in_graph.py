"""The unbatched wrapper's branch for an input without a batch axis compiles in GRAPH_MODE when the input's rank is
not a constant there (a tensor computed by a ``functools.partial`` held on the Cell runs through MindSpore's JIT
Fallback, and both branches of ``x.ndim == rank - 1`` are compiled): ``_unbatch`` called itself for tuples, and a graph
refuses a recursive function ("Side effect is undetectable": batch 7 PackNet's Conv3d)."""
from __future__ import annotations

import functools

import numpy as np
import pytest


def _double(x, k=2):
    return x * k


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_conv3d_after_a_partial_compiles(mode):
    import mindspore as ms
    from mindspore import nn

    import mindport.runtime.unbatched  # noqa: F401  (the wrapped construct)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.f = functools.partial(_double, k=2)
            self.conv3d = nn.Conv3d(1, 2, 3, pad_mode="same", has_bias=True)

        def construct(self, x):
            return self.conv3d(self.f(x).unsqueeze(1))

    net = Net()
    x = np.random.default_rng(0).standard_normal((1, 4, 4, 4)).astype(np.float32)
    w = net.conv3d.weight.asnumpy()
    b = net.conv3d.bias.asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = net(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    # the same convolution in numpy: 'same' padding of a 3x3x3 kernel, one input channel
    padded = np.pad(2 * x, ((0, 0), (1, 1), (1, 1), (1, 1)))
    want = np.zeros((1, 2, 4, 4, 4), np.float32)
    for o in range(2):
        for d in range(4):
            for h in range(4):
                for v in range(4):
                    want[0, o, d, h, v] = (padded[0, d:d + 3, h:h + 3, v:v + 3] * w[o, 0]).sum() + b[o]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
