"""An int-to-float guard (``mp_math.sin``: MindSpore's kernel refuses integers, torch computes them in float32) on a
name whose dominating binding is floating is MindSpore's own op (issue 30: native ports). vit-pytorch's
``posemb_sincos_2d`` binds ``y, x = torch.meshgrid(...)`` (integers) and then ``x = x.flatten()[:, None] * omega``
(floating: omega is ``1.0 / ...``), so the flow-insensitive float facts saw an integer binding; read through the last
plain top-level binding before the read (native_facts._Order.dominating_binding, FlowFloats), ``x.sin()`` is
``ops.sin(x)``. A read before the rebinding, a comprehension's own variable, and a read after a binding in a branch
keep the guard. Expected values come from torch; the fixture is written here."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def posemb(h, w, dim, temperature: int = 10000):
        y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        omega = torch.arange(dim // 4) / (dim // 4 - 1)
        omega = 1.0 / (temperature ** omega)
        a = torch.cat((x.sin(), y.cos()), dim=1)
        y = y.flatten()[:, None] * omega[None, :]
        x = x.flatten()[:, None] * omega[None, :]
        pe = torch.cat((x.sin(), x.cos(), y.sin(), y.cos()), dim=1)
        b = torch.stack([x.sin() for x in torch.arange(3)])
        if h > 2:
            x = torch.arange(3)
        c = x.sin()
        return pe, a, b, c


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 16)

        def forward(self, tokens):
            pe, a, b, c = posemb(3, 4, 16)
            return self.fc(tokens + pe.float()), a, b, c  # GRAPH_MODE gives omega float64 (integ16 too)
""")


def test_a_dominating_float_binding_is_mindspores_op():
    code = convert_source(SOURCE).code
    assert "pe = ops.cat((ops.sin(x), ops.cos(x), ops.sin(y), ops.cos(y)), axis=1)" in code, code


def test_reads_the_integer_binding_may_reach_keep_the_guard():
    code = convert_source(SOURCE).code
    assert "a = ops.cat((mp_math.sin(x), mp_math.cos(y)), axis=1)" in code, code  # before the rebinding
    assert "b = ops.stack([mp_math.sin(x) for x in ops.arange(start=3)])" in code, code  # the comprehension's x
    assert "c = mp_math.sin(x)" in code, code  # after a binding in a branch


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_matches_torch(mode, tmp_path):
    result = convert_source(SOURCE)
    assert not result.diagnostics, result.diagnostics
    x = np.random.default_rng(0).standard_normal((12, 16)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, result.code, "Net", [x], tmp_path, "flowguard", mode, rtol=1e-5, atol=1e-6)
