"""ViewWriteBackTransform (issues 27/30): a name bound to a torch view and written in place is written back into
its base, as torch's shared storage does, in PyNative; in a compiled graph the write-back raises, never silently
loses the write. The whole surface (every aliasing torch operation x every write form x reads) is
tests/converter/test_views_written_in_place.py; here: a model's forward in both modes, the caller's tensor, copies
that must not be written back, and converting converted code."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Net(nn.Module):
        def forward(self, x):
            y = x * 2
            head = y[:, :2]
            head += 1
            a, b = y.chunk(2, 1)
            F.relu(b, inplace=True)
            row = y[1]
            tail = row[2:]
            tail.mul_(-3)
            copied = y.transpose(0, 1).reshape(-1)
            copied.zero_()
            return y
""")


def _inputs():
    return np.linspace(-3, 2, 16, dtype=np.float32).reshape(4, 4)


def test_a_forward_writing_through_views_matches_torch_in_pynative(tmp_path):
    import mindspore as ms
    import torch

    want = load_module(SOURCE, tmp_path / "t_vwb.py", "t_vwb").Net()(torch.tensor(_inputs())).numpy()
    result = convert_source(SOURCE, "vwb.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert result.code.count("mp_inplace.view_update(") == 2  # b (a chunk), copied (a reshape of a transpose)
    for item in ("y[:, :2] = head", "row[2:] = tail", "y[1] = row"):  # basic indexes: MindSpore's own assignment
        assert item in result.code, result.code
    got = load_module(result.code, tmp_path / "m_vwb.py", "m_vwb").Net()(ms.Tensor(_inputs())).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert not np.allclose(want, _inputs() * 2)  # the writes reached y in torch


def test_in_graph_mode_the_write_back_raises_instead_of_losing_the_write(tmp_path):
    import mindspore as ms

    result = convert_source(SOURCE, "vwbg.py")
    net = load_module(result.code, tmp_path / "m_vwbg.py", "m_vwbg").Net()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(Exception, match="in-place update through a torch view"):
            net(ms.Tensor(_inputs()))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


ITEMS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.linspace(0.5, 2.0, 4))

        def forward(self, x):
            y = x * self.scale
            head = y[:, :2]
            head += 1
            row = y[1]
            row.mul_(-3)
            last = y[..., -1]
            last.clamp_(min=0.0)
            return (y * y).sum()
""")


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
def test_writes_through_basic_indexes_are_item_assignments_with_torchs_values_and_gradients(tmp_path, graph):
    import mindspore as ms
    import torch

    result = convert_source(ITEMS, "vwbn.py")
    assert "view_update" not in result.code and not result.diagnostics, result.code
    t_net = load_module(ITEMS, tmp_path / "t_vwbn.py", "t_vwbn").Net()
    t_loss = t_net(torch.tensor(_inputs()))
    t_loss.backward()
    m_net = load_module(result.code, tmp_path / "m_vwbn.py", "m_vwbn").Net()
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    try:
        m_loss, grads = ms.value_and_grad(m_net, None, m_net.trainable_params())(ms.Tensor(_inputs()))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(float(m_loss), t_loss.item(), rtol=1e-6)
    np.testing.assert_allclose(grads[0].asnumpy(), t_net.scale.grad.numpy(), rtol=1e-5)


def test_the_callers_tensor_sees_the_write_and_a_copy_is_not_written_back(tmp_path):
    import mindspore as ms
    import torch

    source = textwrap.dedent("""\
        import torch


        def update(y):
            v = y.narrow(1, 1, 2)
            v.fill_(7.0)
            u = y[2:, :1]
            u -= 50
            c = y[[0, 2]]
            c.zero_()
            f = y.float()
            f += 1
            d = y.double()
            d += 100
            return y
    """)
    result = convert_source(source, "vwbc.py")
    assert not result.diagnostics
    t_arg = torch.tensor(_inputs())
    load_module(source, tmp_path / "t_vwbc.py", "t_vwbc").update(t_arg)
    m_arg = ms.Tensor(_inputs())
    load_module(result.code, tmp_path / "m_vwbc.py", "m_vwbc").update(m_arg)
    np.testing.assert_allclose(m_arg.asnumpy(), t_arg.numpy(), rtol=1e-6)


def test_what_cannot_be_written_back_is_flagged():
    source = textwrap.dedent("""\
        import torch


        def update(y, n):
            r = y.real
            r.add_(1)
            v = y.narrow(0, 0, len(n) + n.count(1))
            v.zero_()
            w = y[0]
            y = y * 2
            w += 1
            return y
    """)
    result = convert_source(source, "vwbf.py")
    flagged = sorted(d.line for d in result.diagnostics if d.code == "MP102")
    assert flagged == [6, 8, 11], [d.format() for d in result.diagnostics]


def test_converting_converted_code_changes_nothing():
    once = convert_source(SOURCE, "vwbi.py").code
    assert convert_source(once, "vwbi.py").code == once
