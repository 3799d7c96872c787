"""Issue 30 (native ports): ``x.bool()`` of a tensor real by construction is MindSpore's own ``x.astype(ms.bool_)``
(native_facts.RealFacts; TableCallTransform.RUNTIME_BOOL).

``x.bool()`` goes through ``mindport.runtime.tensor.bool_`` for one decision: a complex ``x`` is ``x != 0`` in torch,
where MindSpore's cast reads the real part only (``0+3.5j`` became False). A real input needs no decision. NCRF++'s
CRF writes ``mask = (1 - mask.long()).bool()`` of a forward parameter: a cast to a real dtype (``.long()``,
``.float()``...) is real whatever its receiver is (torch drops a complex's imaginary part; MindSpore's cast reads the
real part), so the difference is real and its ``.bool()`` is MindSpore's. A ``.bool()`` of a parameter itself keeps
the runtime's (it may be complex: the fixture gives it ``0+3.5j``). Every class is compared with torch in PyNative
and GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport.migrator import convert_source
from tests.converter.port_check import assert_port_matches_in_mode

SOURCE = textwrap.dedent("""
    import torch
    from torch import nn


    class CastMask(nn.Module):
        def forward(self, x, mask):
            keep = (1 - mask.long()).bool()
            return x.masked_fill(keep, 0.)


    class ArangeFlags(nn.Module):
        def forward(self, x, mask):
            n = x.shape[-1]
            flags = (torch.arange(n) % 2).bool()
            return x * flags.float() + mask.float().bool().float()


    class ParameterBool(nn.Module):
        def forward(self, x, z):
            return x * z.bool().float()
""")

NATIVE = ("CastMask", "ArangeFlags")


def _class_code(code: str, name: str) -> str:
    return code.split(f"class {name}")[1].split("\nclass ")[0]


def _inputs(name: str):
    rng = np.random.default_rng(57)
    x = rng.standard_normal((2, 5)).astype(np.float32)
    if name == "ParameterBool":
        return [x, np.array([[0, 3.5j, 1, 0, -2], [1j, 0, 0, 2, 0]], dtype=np.complex64)]
    return [x, rng.integers(0, 2, (2, 5)).astype(np.int64)]


def test_real_bool_casts_are_native():
    code = convert_source(SOURCE).code
    for name in NATIVE:
        body = _class_code(code, name)
        assert "astype(ms.bool_)" in body and "bool_(" not in body.replace("astype(ms.bool_)", ""), body
    assert "mp_tensor.bool_(z)" in _class_code(code, "ParameterBool"), _class_code(code, "ParameterBool")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_real_bool_casts_match_torch(tmp_path, mode):
    code = convert_source(SOURCE).code
    for name in (*NATIVE, "ParameterBool"):
        if name == "ParameterBool" and mode == "graph":
            continue  # a complex input in a graph is not what this test is about (PyNative checks the runtime's cast)
        assert_port_matches_in_mode(SOURCE, code, name, _inputs(name), tmp_path, f"{name}_{mode}", mode,
                                    rtol=1e-6, atol=1e-7)
