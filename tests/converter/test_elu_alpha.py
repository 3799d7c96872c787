"""ELU with an alpha other than 1.0 (GRU4Rec's final_act='elu-0.5': nn.ELU(alpha=float(...)) from a name):
MindSpore 2.10's Elu kernel refuses it ("In Elu, alpha must be 1.0f") at run time, so a literal alpha other than 1.0
or a name goes to torch's formula in mindport.runtime (layers.ELU, nn_functional.elu, inplace.elu_); alpha=1.0 stays
MindSpore's nn.ELU / ops.elu. Compared with torch: values and input gradients, PyNative and compiled."""
from __future__ import annotations

import importlib
import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Head(nn.Module):
        def __init__(self, act='elu-0.5'):
            super().__init__()
            self.named = nn.ELU(alpha=float(act.split('-')[1]))
            self.literal = nn.ELU(0.3)
            self.one = nn.ELU(alpha=1.0)
            self.scale = float(act.split('-')[1]) * 4

        def forward(self, x):
            y = self.named(x) + 2 * self.literal(x) + 3 * self.one(x)
            return y + F.elu(x * 2, alpha=self.scale) + F.elu(x, 1.0)
""")


def _torch_and_ms(tmp_path, monkeypatch):
    result = convert_source(SOURCE, "head.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "mp_nn.ELU(alpha=float(" in result.code and "mp_nn.ELU(alpha=0.3)" in result.code, result.code
    assert "nn.ELU(alpha=1.0)" in result.code and "ops.elu(x, alpha=1.0)" in result.code, result.code
    t_ns: dict = {}
    exec(compile(SOURCE, "head_torch.py", "exec"), t_ns)  # noqa: S102 - our own test program
    (tmp_path / "head_ms.py").write_text(result.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    return t_ns["Head"](), vars(importlib.import_module("head_ms"))["Head"]()


@pytest.mark.parametrize("graph", [False, True])
def test_elu_with_any_alpha_matches_torch_values_and_gradients(graph, tmp_path, monkeypatch):
    t_model, m_model = _torch_and_ms(tmp_path, monkeypatch)
    x = np.concatenate([np.random.default_rng(0).standard_normal(40), [-100.0, 0.0, 100.0]]).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    out = t_model(xt)
    out.sum().backward()
    call = ms.jit(m_model.construct) if graph else m_model
    np.testing.assert_allclose(call(ms.Tensor(x)).asnumpy(), out.detach().numpy(), rtol=1e-5, atol=1e-6)
    grad = ms.grad(lambda v: call(v).sum())(ms.Tensor(x)).asnumpy()
    assert np.isfinite(grad).all()  # no inf from expm1 of a large positive x reaches the gradient
    np.testing.assert_allclose(grad, xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_in_place_elu_with_alpha_writes_torchs_values_into_its_input():
    source = textwrap.dedent("""
        import torch
        import torch.nn.functional as F

        def act(x):
            F.elu(x, alpha=0.25, inplace=True)
            return x
    """)
    result = convert_source(source, "act.py")
    assert not result.diagnostics and "mp_inplace.elu_(x, alpha=0.25)" in result.code, result.code
    m_ns: dict = {}
    exec(compile(result.code, "act_ms.py", "exec"), m_ns)  # noqa: S102 - our own converted program
    x = np.linspace(-3, 3, 13).astype(np.float32)
    expected = torch.nn.functional.elu(torch.tensor(x), alpha=0.25).numpy()
    np.testing.assert_allclose(m_ns["act"](ms.Tensor(x)).asnumpy(), expected, rtol=1e-6, atol=1e-7)
