"""``reversed(t)`` of a tensor is torch's ``t.flip(0)``, a tensor code goes on using as one; on MindSpore's Tensor
Python's ``reversed`` gives an iterator over the rows ("'reversed' object has no attribute 'mean'"). Where the
argument is a tensor by construction the converter writes MindSpore's flip, so the port needs no runtime module for
it: the converted file below imports none, and matches torch."""
from __future__ import annotations

import textwrap

import numpy as np

from mindport import convert_source
from port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch


    def returns(n, gamma):
        r = torch.arange(n) / n
        r = -r * gamma + 1
        back = reversed(r)
        steps = torch.arange(n, dtype=torch.float32)
        rows = [s * 2 for s in reversed(steps)]
        table = reversed(torch.zeros(3, 2).detach())
        return back.mean() + back, rows[0], table + 1, reversed(torch.tensor([1.0, 2.0]))


    def given(rewards):
        return list(reversed(rewards))
""")


def test_reversed_tensor_built_in_the_function_is_flipped(tmp_path):
    code = convert_source(SOURCE).code
    assert "mindport" not in code  # no runtime module: the port stands on MindSpore's own flip
    assert code.count("ops.flip(") == 4, code  # r, steps, the detached zeros, the tensor display
    assert "reversed(rewards)" in code  # a parameter: its kind is unknown, Python's reversed stays
    x = np.array([1.0, -0.5, 2.0, 0.25], np.float32)
    import mindspore as ms
    import torch

    t_mod, m_mod = load_module(SOURCE, tmp_path / "t.py", "torch_reversed_tensor"), \
        load_module(code, tmp_path / "m.py", "ms_reversed_tensor")
    t_out = t_mod.returns(4, 0.9) + tuple(t_mod.given(torch.tensor(x)))
    m_out = m_mod.returns(4, 0.9) + tuple(m_mod.given(ms.Tensor(x)))
    assert len(t_out) == len(m_out)
    for t, m in zip(t_out, m_out):
        np.testing.assert_allclose(m.asnumpy(), t.numpy(), rtol=1e-6, atol=1e-7)
