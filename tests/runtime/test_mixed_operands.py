"""Mixed-dtype operands and integer/bool receivers (issue 26, promo13; the forms battery's KNOWN_LOUD families):

* the calls whose MindSpore 2.10 kernel takes one dtype for all its tensors (addcmul, addcdiv, ger, igamma, igammac,
  logaddexp, logaddexp2) give torch's common type of their operands through the one promotion rule
  ``mindport.runtime.math.promoted_operands`` (``ids.addcmul(a, b)`` with an int64 ``ids`` is float32); the scatters
  (select_scatter, slice_scatter) write ``src`` into the receiver's dtype;
* isinf/isposinf/isneginf/nan_to_num/ceil/floor of an integer or bool tensor compute as torch does;
* the converter keeps MindSpore's own ``ops.<name>`` where every tensor operand is floating point by construction.

Function and method forms, PyNative and GRAPH_MODE; expected values are torch's, computed here."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from mindport import convert_source  # noqa: E402
from tests.converter.port_check import load_module  # noqa: E402

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Mixed(nn.Module):
        def forward(self, ids, mask, a, b, v, w, s, t):
            return (torch.addcmul(ids, a, b, value=0.5), mask.addcmul(a, b), ids.addcdiv(a, b.abs() + 1, value=2),
                    torch.ger(v, w), mask[0].ger(w), (ids[0].abs() + 1).igamma(w.abs() + 0.5),
                    torch.igammac(ids[0].abs() + 1, w.abs() + 0.5),
                    ids.logaddexp(a), torch.logaddexp2(mask, a), ids.select_scatter(s, 1, 2),
                    torch.select_scatter(mask, s, 1, 0), ids.slice_scatter(t, 1, 0, 4, 2),
                    torch.isinf(ids), mask.isposinf(), torch.isneginf(ids), ids.nan_to_num(1.0, 2.0, -2.0),
                    torch.nan_to_num(mask), torch.ceil(ids), ids.floor())
""")


def _inputs():
    rng = np.random.default_rng(0)
    ids = rng.integers(-5, 5, (3, 4)).astype(np.int64)
    mask = rng.random((3, 4)) > 0.5
    a, b = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    v = rng.integers(0, 4, (3,)).astype(np.int64)
    w = rng.standard_normal(4).astype(np.float32)
    s = (rng.standard_normal(3) * 3).astype(np.float32)
    t = (rng.standard_normal((3, 2)) * 3).astype(np.float32)
    return ids, mask, a, b, v, w, s, t


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_mixed_operands_match_torch(tmp_path, mode):
    import mindspore as ms
    import torch

    result = convert_source(SOURCE, "mixed.py")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    ns_t: dict = {}
    exec(compile(SOURCE, "mixed_torch.py", "exec"), ns_t)  # noqa: S102 - the test's own program
    inputs = _inputs()
    want = [t.numpy() for t in ns_t["Mixed"]()(*(torch.from_numpy(x.copy()) for x in inputs))]
    net = load_module(result.code, tmp_path / f"mixed_ms_{mode}.py", f"mixed_ms_{mode}").Mixed()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        got = [t.asnumpy() for t in net(*(ms.Tensor(x.copy()) for x in inputs))]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        assert g.shape == w.shape, (i, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"output {i}")


def test_native_where_operands_are_floating():
    """Floating point by construction (a Linear's output, a sigmoid of it): MindSpore's own ops; an argument of
    unknown dtype: the runtime's promotion."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

            def forward(self, x, ids):
                h = self.lin(x)
                g = torch.sigmoid(h)
                return (h.addcmul(g, g, value=0.5), torch.logaddexp(h, g), h.isinf(), torch.floor(g),
                        ids.addcmul(h, h), torch.logaddexp(ids, h), ids.isinf(), ids.floor())
    """)
    code = convert_source(source).code
    assert "ops.addcmul(h" in code and "ops.logaddexp(h, g)" in code
    assert "ops.isinf(h)" in code and "ops.floor(g)" in code
    assert "mp_math.addcmul(ids" in code and "mp_math.logaddexp(ids" in code
    assert "mp_math.isinf(ids)" in code and "mp_math.floor(ids)" in code


def test_promoted_operands_is_torch_result_type():
    """The one rule, on every pair of the dtypes the family meets and 0-d / Python-number operands: torch's
    result_type."""
    import itertools

    import mindspore as ms
    import torch

    from mindport.runtime.math import promoted_operands

    dtypes = ("bool", "uint8", "int32", "int64", "float16", "float32", "float64")
    shapes = ((3,), ())
    for d1, d2, s1, s2 in itertools.product(dtypes, dtypes, shapes, shapes):
        x1, x2 = np.ones(s1, d1), np.ones(s2, d2)
        want = torch.result_type(torch.from_numpy(x1), torch.from_numpy(x2))
        got = promoted_operands(ms.Tensor(x1), ms.Tensor(x2))
        assert {str(t.dtype).lower().replace("bool_", "bool") for t in got} == {str(want).split(".")[1]}, (d1, d2, s1, s2)
    for number in (2, 2.5, True):
        for d in dtypes:
            want = torch.result_type(torch.from_numpy(np.ones(3, d)), number)
            got = promoted_operands(ms.Tensor(np.ones(3, d)), number)
            assert str(got[0].dtype).lower().replace("bool_", "bool") == str(want).split(".")[1], (d, number)
            assert got[1] == number
