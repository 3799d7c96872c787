"""A loop that updates in place the pieces ``split``/``chunk``/``unbind`` give (lucidrains'
memory-efficient-attention FlashAttention, written in plain torch: ``for qc, oc, row_sums in zip(q.split(n, dim=-2),
o.split(n, dim=-2), all_row_sums.split(n, dim=-2)): ... oc.mul_(d).add_(v) ... oc.div_(row_sums)``). torch's pieces
are views: the updates land in ``o``. MindSpore's are copies: before, ``o`` stayed zeros and the port ran and
returned wrong numbers with no diagnostic (SILENT: the reversible LM 0.144 off, the attention layer 1.0 off). Now the
pieces of each updated tensor are kept in a list, the loop runs over them, and the tensor is set from them after the
loop (``mp_inplace.copy_(o, src=ops.cat(_mp_pieces_1, axis=-2))``). Each form run in torch and, converted, on
MindSpore."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Flash(nn.Module):
        def forward(self, q):
            o = torch.zeros_like(q)
            sums = torch.zeros((*q.shape[:-1], 1))
            for qc, oc, rs in zip(q.split(3, dim=-2), o.split(3, dim=-2), sums.split(3, dim=-2)):
                w = qc.exp()
                oc.mul_(0.5).add_(w)
                rs.copy_(w.sum(-1, keepdim=True) + rs)
                oc.div_(rs)
            return o, sums


    class Chunks(nn.Module):
        def forward(self, x):
            y = x.clone()
            for piece in y.chunk(3, 1):
                piece.mul_(piece.mean())
            return y


    class Rows(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 4))

        def forward(self, x):
            out = torch.zeros_like(x)
            for i, (row, dst) in enumerate(zip(x.unbind(0), out.unbind(0))):
                dst.copy_(row * self.scale * (i + 1))
                if i == 1:
                    continue
                dst.add_(1.0)
            return out


    class Bound(nn.Module):
        def forward(self, q):
            o = torch.zeros_like(q)
            maxes = torch.full((*q.shape[:-1], 1), -1e4)
            splits = zip(q.split(2, dim=-2), o.split(2, dim=-2), maxes.split(2, dim=-2))
            for ind, (qc, oc, mc) in enumerate(splits):
                new = torch.maximum(qc.amax(-1, keepdim=True), mc)
                oc.add_(torch.exp(qc - new) * (ind + 1))
                mc.copy_(new)
            return o, maxes


    class Rebound(nn.Module):
        def forward(self, x):
            y = x.clone()
            for piece in y.split(2, -1):
                piece = piece * 2
                piece.add_(1.0)
            return y
""")

SHAPES = {"Bound": (2, 5, 3), "Flash": (2, 7, 4), "Chunks": (2, 6, 3), "Rows": (3, 4), "Rebound": (2, 5)}


def test_pieces_are_written_back():
    code = convert_source(SOURCE).code
    assert "_mp_pieces_1 = list(o.split(3, -2))" in code, code
    assert "mp_inplace.copy_(o, src=ms.ops.cat(_mp_pieces_1, axis=-2))" in code, code
    assert "mp_inplace.copy_(y, src=ms.ops.cat(_mp_pieces_0, axis=1))" in code, code
    assert "ms.ops.stack(_mp_pieces_1, axis=0)" in code, code
    assert "splits = zip(q.split(2, -2), _mp_pieces_1, _mp_pieces_2)" in code, code


@pytest.mark.parametrize("cls", sorted(SHAPES))
def test_port_matches_torch(tmp_path, cls):
    import mindspore as ms
    import torch

    code = convert_source(SOURCE).code
    torch_net = getattr(load_module(SOURCE, tmp_path / f"t_up_{cls}.py", f"t_up_{cls}"), cls)().eval()
    ms_net = getattr(load_module(code, tmp_path / f"m_up_{cls}.py", f"m_up_{cls}"), cls)()
    ms_net.set_train(False)
    for name, p in torch_net.named_parameters():
        getattr(ms_net, name).set_data(ms.Tensor(p.detach().numpy()))
    x = np.random.default_rng(0).standard_normal(SHAPES[cls]).astype(np.float32)
    with torch.no_grad():
        want = torch_net(torch.from_numpy(x))
    got = ms_net(ms.Tensor(x))
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        assert np.abs(w.numpy()).max() > 0
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-5)
