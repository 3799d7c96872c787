"""A ``torch.autograd.Function`` whose backward returns ``()`` (uyzhang/PCT_Pytorch's pointnet2_ops: furthest point
sampling and index gathers, forward-only, their outputs marked non-differentiable). The bprop's return rewrite
indexed the first item of the empty tuple: the whole file failed to convert (MP299 internal error, IndexError) and
was copied as torch, so its one layer class (GroupAll) was not a Cell. The class: an empty tuple returned from
backward stays as written; the file converts and its forward matches torch."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.autograd import Function


    class TopIndex(Function):
        @staticmethod
        def forward(ctx, x, k):
            out = torch.argsort(x, dim=1, descending=True)[:, :k]
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, grad_out=None):
            return ()


    top_index = TopIndex.apply


    class Pick(nn.Module):
        def __init__(self, k=3):
            super().__init__()
            self.k = k
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            h = self.fc(x)
            idx = top_index(h, self.k)
            return torch.gather(h, 1, idx)
""")


def test_a_backward_returning_an_empty_tuple_converts(tmp_path):
    import mindspore as ms
    import torch

    from mindport import transfer_weights

    result = convert_source(SOURCE)
    assert not any(d.code == "MP299" for d in result.diagnostics), [d.format() for d in result.diagnostics]
    assert "class Pick(nn.Cell)" in result.code and "return ()" in result.code, result.code
    torch_net = load_module(SOURCE, tmp_path / "t_pick.py", "t_pick").Pick()
    ms_net = load_module(result.code, tmp_path / "m_pick.py", "m_pick").Pick()
    transfer_weights(torch_net.state_dict(), ms_net)
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ms_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
