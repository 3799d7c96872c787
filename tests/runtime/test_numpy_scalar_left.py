"""A numpy scalar on the left of an operator with a tensor gives a tensor, as in torch (FourierKAN, batch22 first
contact: ``nn.Parameter(th.randn(2, out, in, g) / (np.sqrt(in) * (th.arange(g) + 1) ** 2))`` failed to build,
"Failed calling div with div(<class 'numpy.ndarray'>)": numpy had turned ``np.sqrt(in) * tensor`` into an ndarray).
torch's Tensor sets ``__array_priority__``; mindport.runtime.numpy_ints gives MindSpore's the same. Run in torch and,
converted, on MindSpore."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np

from mindport import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "converter"))
from port_check import assert_port_matches_in_mode  # noqa: E402

SOURCE = textwrap.dedent("""\
    import numpy as np
    import torch as th


    class Fourier(th.nn.Module):
        def __init__(self, inputdim=4, outdim=3, gridsize=5):
            super().__init__()
            self.gridsize, self.inputdim = gridsize, inputdim
            norm = (th.arange(gridsize) + 1) ** 2
            self.coeffs = th.nn.Parameter(th.randn(2, outdim, inputdim, gridsize) / (np.sqrt(inputdim) * norm))

        def forward(self, x):
            k = th.arange(1, self.gridsize + 1).reshape(1, 1, 1, self.gridsize)
            xr = x.reshape(x.shape[0], 1, x.shape[1], 1)
            y = th.sum(th.cos(k * xr) * self.coeffs[0:1], (-2, -1)) + th.sum(th.sin(k * xr) * self.coeffs[1:2], (-2, -1))
            return np.float32(0.5) * y - np.float64(1.5) + np.sqrt(2.0) * y
""")


def test_a_numpy_scalar_on_the_left_gives_a_tensor(tmp_path):
    import mindspore as ms

    import mindport.runtime.numpy_ints  # noqa: F401 - what converted code loads with the runtime

    t = ms.Tensor(np.arange(3, dtype=np.float32))
    for value in (np.sqrt(4.0) * t, np.float64(1.5) - t, np.float32(2) + t):
        assert isinstance(value, ms.Tensor) and value.dtype == ms.float32, (type(value), getattr(value, "dtype", None))
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "Fourier", [x], tmp_path, "np_left", "pynative", atol=1e-5)
