"""torch.logcumsumexp over complex tensors (the Heisen-sequence scan of SSM code, e.g. mamba-tiny's
scan_mode='logcumsumexp'): MindSpore 2.10's CumulativeLogsumexp takes float16/32/64 only and raises on complex64.
The converted call goes through mindport.runtime.math.logcumsumexp, which keeps ops.logcumsumexp for real input and
scans the complex log-add-exp otherwise, with torch's (unwrapped) branch of the imaginary part. Each call is converted
by the real converter and run in both frameworks: values and dtypes must agree."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mindport.migrator import convert_source
from mindport.proofs.function import _load

CALLS = ["torch.logcumsumexp(x, 1)", "torch.logcumsumexp(x, dim=0)", "x.logcumsumexp(-1)", "x.logcumsumexp(dim=1)"]


def _input(kind: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    shape = (3, 37, 4)
    if kind == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    z = rng.standard_normal(shape) * 3 + 1j * rng.standard_normal(shape) * 10  # angles far beyond (-pi, pi]
    if kind == "complex64_spread":
        z[:, :5] -= 150  # terms far below the row's largest: no common scaling can keep them
    return z.astype(np.complex64)


@pytest.mark.parametrize("kind", ["float32", "complex64", "complex64_spread"])
@pytest.mark.parametrize("call", CALLS)
def test_logcumsumexp_matches_torch_on_real_and_complex(call, kind):
    import mindspore as ms

    x = _input(kind)
    torch_code = f"import torch\n\n\ndef run(x):\n    return {call}\n"
    ms_code = convert_source(torch_code, "<logcumsumexp>").code
    assert "mindport:" not in ms_code, ms_code
    expected = _load(torch_code, "torch").run(torch.tensor(x)).numpy()
    got = _load(ms_code, "ms").run(ms.Tensor(x)).asnumpy()
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_float_input_keeps_the_native_kernel():
    """Real input is one ops.logcumsumexp call (no scan): the helper only adds the dtype test."""
    import mindspore as ms
    from mindspore import ops

    from mindport.runtime import math as mp_math

    x = ms.Tensor(_input("float32"))
    np.testing.assert_array_equal(mp_math.logcumsumexp(x, 1).asnumpy(), ops.logcumsumexp(x, axis=1).asnumpy())


def test_complex_scan_compiles_in_graph_mode():
    """The scan's steps are fixed by the static length: the helper inside ``construct`` compiles and matches torch."""
    import mindspore as ms
    from mindspore import nn

    from mindport.runtime import math as mp_math

    class Scan(nn.Cell):
        def construct(self, x):
            return mp_math.logcumsumexp(x, 1)

    x = _input("complex64_spread")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = Scan()(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, torch.logcumsumexp(torch.tensor(x), 1).numpy(), rtol=1e-4, atol=1e-4)
