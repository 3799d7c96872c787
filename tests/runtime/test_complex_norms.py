"""Norms of complex and float64 tensors (mindport.runtime.linalg vector_norm/matrix_norm/norm/nuclear_norm, mindport.runtime.math cond):
torch's norm of a complex tensor is real (float32 for complex64) and its singular-value norms keep float64; MindSpore
2.10's ops.vector_norm/matrix_norm/norm return complex64 for complex input, ops.matrix_norm's 2 / -2 / 'nuc' drop the
imaginary part and compute float64 in float32, and ops.cond computes float64 in float32. Each call is converted by the
real converter and run in both frameworks over float32, float64 and complex64, batched and not: values and dtypes
must agree."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mindport.migrator import convert_source
from mindport.proofs.function import _load

CALLS = ["torch.linalg.vector_norm(x)", "torch.linalg.vector_norm(x, 1, -1)", "torch.linalg.vector_norm(x, float('inf'))",
         "torch.linalg.vector_norm(x, 2, (0, 1), keepdim=True)",
         "torch.linalg.matrix_norm(x)", "torch.linalg.matrix_norm(x, 2)", "torch.linalg.matrix_norm(x, -2)",
         "torch.linalg.matrix_norm(x, 'nuc', keepdim=True)", "torch.linalg.matrix_norm(x, 'nuc', dim=(0, -1))",
         "torch.linalg.norm(x)", "torch.linalg.norm(x, dim=-1)", "torch.linalg.norm(x, 2, dim=(-2, -1))",
         "torch.linalg.norm(x, 'nuc', dim=(-1, -2), keepdim=True)",
         "torch.nuclear_norm(x)", "torch.nuclear_norm(x, keepdim=True)",
         "torch.linalg.cond(x)", "torch.linalg.cond(x, 2)", "torch.linalg.cond(x, -2)"]


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("call", CALLS)
def test_norms_are_real_and_keep_float64(call, dtype, shape):
    import mindspore as ms

    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    if dtype == "complex64":
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(dtype)
    torch_code = f"import torch\n\n\ndef run(x):\n    return {call}\n"
    ms_code = convert_source(torch_code, "<norms>").code
    assert "mindport:" not in ms_code, ms_code
    expected = _load(torch_code, "torch").run(torch.tensor(x)).numpy()
    got = _load(ms_code, "ms").run(ms.Tensor(x)).asnumpy()
    assert got.dtype == expected.dtype, f"{call} {dtype}: {got.dtype} != {expected.dtype}\n{ms_code}"
    assert got.shape == expected.shape, f"{call} {dtype}: {got.shape} != {expected.shape}"
    tol = 1e-10 if dtype == "float64" else 1e-4
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=f"{call} {dtype}\n{ms_code}")
