"""torch's add*mm family on integer tensors (mindport.runtime.math.addmm/addbmm/baddbmm): torch truncates the scalars
beta and alpha to integers (0.5 -> 0, -1.5 -> -1) and keeps the integer dtype; MindSpore 2.10 computes with the float
scalars and returns float32 (ops.addmm, ops.addbmm), refuses them (ops.baddbmm), and ops.addbmm turns int32 into
int64. Each call form (function, method, in-place method) is converted by the real converter and run in both
frameworks over int32/int64 and float32, with integer and float scalars: values and dtypes must agree, and the
in-place receiver must hold torch's result."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mindport.migrator import convert_source
from mindport.proofs.function import _load

SHAPES = {"addmm": ((2, 3), (2, 4), (4, 3)), "addbmm": ((2, 3), (5, 2, 4), (5, 4, 3)),
          "baddbmm": ((5, 2, 3), (5, 2, 4), (5, 4, 3))}
SCALARS = ["", ", beta=2, alpha=3", ", beta=0.5, alpha=2.0", ", beta=1.5, alpha=-1.5", ", alpha=1.0"]
FORMS = {"function": "return torch.{n}(a, b, c{s})", "method": "return a.{n}(b, c{s})",
         "inplace": "r = a.{n}_(b, c{s})\n    return r, a"}


def _run(code, arrays, framework):
    if framework == "torch":
        args = [torch.tensor(x) for x in arrays]
    else:
        import mindspore as ms
        args = [ms.Tensor(x.copy()) for x in arrays]
    out = _load(code, framework).run(*args)
    return [o.numpy() if hasattr(o, "numpy") and framework == "torch" else o.asnumpy()
            for o in (out if isinstance(out, (tuple, list)) else (out,))]


def _assert_port_matches(body, arrays, label):
    """``def run(a, b, c):`` with ``body``, converted with no flag and run in both frameworks on ``arrays``: every
    output has torch's dtype and values."""
    torch_code = f"import torch\n\n\ndef run(a, b, c):\n    {body}\n"
    ms_code = convert_source(torch_code, "<integral>").code
    assert "mindport:" not in ms_code, ms_code
    expected, got = _run(torch_code, arrays, "torch"), _run(ms_code, arrays, "ms")
    for t, m in zip(expected, got):
        assert m.dtype == t.dtype, f"{label}: {m.dtype} != {t.dtype}\n{ms_code}"
        np.testing.assert_allclose(m, t, rtol=1e-5, atol=1e-4, err_msg=label)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("name", list(SHAPES))
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_integer_tensors_keep_torchs_scalars_and_dtype(name, form, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.integers(-5, 6, s).astype(dtype) for s in SHAPES[name]]
    for scalars in SCALARS:
        _assert_port_matches(FORMS[form].format(n=name, s=scalars), arrays, f"{name} {form} {dtype}{scalars}")


@pytest.mark.parametrize("call", ["return torch._foreach_addcmul([a, b], [b, c], [c, a], {v})",
                                  "torch._foreach_addcmul_([a, b], [b, c], [c, a], {v})\n    return a, b"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_foreach_addcmul_value_on_integer_tensors(call, dtype):
    """torch casts _foreach_addcmul's value to the tensors' dtype too: 0.3 adds nothing to int tensors, 2.7 twice."""
    rng = np.random.default_rng(1)
    arrays = [rng.integers(-5, 6, (2, 3)).astype(dtype) for _ in range(3)]
    for value in ("0.3", "2.7", "-1.5", "3", "value=0.5"):
        _assert_port_matches(call.format(v=value), arrays, f"{call} {dtype} {value}")
