"""A list compared with a number, a string or a tuple in ``construct`` is a constant in GRAPH_MODE, as in Python
(mindport.runtime.graph_compare).

Measured on MindSpore 2.10 before: ``[1] == 1`` in a graph is not folded (no registered List/Number ``==``: the
default goes through the JIT Fallback and gives a run-time bool), so the graph infers both branches of
``if cfg.stride == 1 and c_in == c_out: x = x + inputs`` and the branch torch never takes fails to compile ("For
'Add', input1.shape and input2.shape need to broadcast": EfficientNet-PyTorch's MBConvBlock, whose block arguments
hold ``stride=[1]``). Expected values come from torch. The converted file loads the runtime (``Tensor.softmax`` is
mindport's), as EfficientNet's does; a file that loads none keeps MindSpore's comparison (graph_bool's limit too)."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import transfer_weights
from tests.converter.port_check import run_in_mode, torch_and_converted

SOURCE = textwrap.dedent("""
    import collections

    import torch
    import torch.nn as nn

    Args = collections.namedtuple("Args", ["step", "c_in", "c_out", "kind"])


    class Block(nn.Module):
        def __init__(self, args):
            super().__init__()
            self.args = args
            self.proj = nn.Conv2d(args.c_in, args.c_out, 1)

        def forward(self, inputs):
            x = self.proj(inputs)
            if self.args.step == 1 and self.args.c_in == self.args.c_out:
                x = x + inputs
            if self.args.kind != "plain":
                x = x * 2
            if (1, 1) == self.args.step or "x" == self.args.kind:
                x = x[:, :1] + inputs
            if self.args.kind == ["plain"]:
                x = x - 1
            return x.softmax(-1) * x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([
                Block(Args([1], 4, 6, ["plain"])),      # a list step: torch never adds the residual
                Block(Args(1, 6, 6, "plain")),          # an int step: torch adds it
                Block(Args([1], 6, 6, ["plain"])),
            ])

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_list_compared_with_a_number_is_a_constant_branch(tmp_path, monkeypatch, mode):
    t_ns, m_ns = torch_and_converted(SOURCE, f"graph_compare_{mode}", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Net"]().eval()
    m_model = m_ns["Net"]()
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 5)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    got = run_in_mode(m_model, [ms.Tensor(x)], mode)
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("left, right", [([1], 1), (1, [1]), ([1], "a"), ("a", [1]), ([1], (1,)), ((1,), [1]),
                                         ([1], 1.0), ([1], True), ([1], [1]), ([1], [2])])
def test_list_comparisons_are_python_s_in_a_graph(left, right):
    class Compare(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.left, self.right = left, right

        def construct(self, x):
            return x + 1 if self.left == self.right else x, x + 1 if self.left != self.right else x

    from mindport.runtime import graph_compare  # noqa: F401 - what a converted file loads with the runtime
    x = ms.Tensor(np.zeros(2, np.float32))
    eq, ne = run_in_mode(Compare(), [x], "graph")
    assert (eq.asnumpy()[0] == 1) == (left == right)
    assert (ne.asnumpy()[0] == 1) == (left != right)
