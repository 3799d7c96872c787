"""``x.repeat([B, S, 1])`` (point-e's pointnet2_utils): torch takes the sizes as a list; the conversion wrote
``x.tile([B, S, 1])`` and MindSpore's tile refuses a list ("Failed calling tile with tile(List<int, int, int>)"). A
list display of sizes is written as a tuple display; the port matches torch."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch


    def group(x, n):
        B, S = x.shape[0], x.shape[1]
        idx = torch.arange(S).view(1, S, 1).repeat([B, 1, n])
        return x.unsqueeze(-1).repeat([1, 1, n]) + idx, x[0].repeat([2]), torch.zeros([B, n])
""")


def test_sizes_given_as_a_list_display_convert_and_match(tmp_path):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    assert "tile([" not in code, code
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    want = load_module(SOURCE, tmp_path / "t_sizes.py", "t_sizes").group(torch.from_numpy(x), 4)
    got = load_module(code, tmp_path / "m_sizes.py", "m_sizes").group(ms.Tensor(x), 4)
    for w, g in zip(want, got):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=1e-6)
