"""nn.ConvTranspose2d/3d with output_padding (decoders: stride 2, padding 1, output_padding 1) convert with no
diagnostic and compute torch's values: output_padding folds into asymmetric padding, written as literals; given by
names (which may hold an output_padding larger than the padding), the runtime layer decides when it is built
(tests/converter/test_conv_transpose_output_padding.py: larger ones)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.converter.port_check import build_layer_pair

CASES = [
    # (layer, constructor arguments after the channels, input shape)
    ("ConvTranspose2d", "3, stride=2, padding=1, output_padding=1", (2, 4, 5, 6)),
    ("ConvTranspose2d", "4, 2, 1, 1", (2, 4, 5, 5)),
    ("ConvTranspose2d", "3, stride=3, padding=(2, 1), output_padding=(2, 0), dilation=2", (1, 4, 4, 5)),
    ("ConvTranspose2d", "k, stride=s, padding=p, output_padding=op", (2, 4, 5, 6)),
    ("ConvTranspose2d", "k, stride=s, padding=(p, 0), output_padding=(op, 0)", (2, 4, 5, 6)),
    ("ConvTranspose2d", "3, stride=2, padding=1, output_padding=0", (2, 4, 5, 6)),
    ("ConvTranspose3d", "3, stride=2, padding=1, output_padding=1", (1, 4, 3, 4, 5)),
    ("ConvTranspose3d", "3, stride=2, padding=p, output_padding=(op, 0, op)", (1, 4, 3, 4, 5)),
]


@pytest.mark.parametrize(("layer", "args", "shape"), CASES)
def test_output_padding_matches_torch(layer, args, shape):
    import mindspore as ms
    import torch

    t_layer, m_layer, code = build_layer_pair(f"{layer}(4, 3, {args})", "k=3, s=2, p=1, op=1")
    if "op" not in args:  # literals: MindSpore's own layer, the output padding folded into its padding
        assert "output_padding" not in code and "mp_nn" not in code, code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = t_layer(torch.tensor(x)).numpy()
    got = m_layer(ms.Tensor(x)).asnumpy()
    assert got.shape == want.shape, code
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=code)
