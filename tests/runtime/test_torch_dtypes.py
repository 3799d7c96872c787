"""Results in torch's dtype and values where MindSpore 2.10 computes the op differently for some dtypes (the
differential sweep's dtype variants). Each torch snippet is converted by the real converter and run in both
frameworks over dtypes, shapes and optional arguments: values and dtypes must agree.

- max_pool3d (F.max_pool3d, torch.max_pool3d, F.max_pool3d_with_indices) on signed integer tensors: MindSpore's
  kernel starts each window's maximum at 0, so a window of negative values gave 0.
- torch.hinge_embedding_loss on integer tensors: torch fills the margin into their dtype (truncated) and keeps it
  (int64 when summed); MindSpore's float margin made the loss float32.
- bilinear (F.bilinear, torch.bilinear): MindSpore's bidense returned int64 for int32 inputs without a bias.
- torch.trapz: ops.trapz computed float64 in float32 and returned float32 for complex64 input.
- torch.linalg.eigvalsh: MindSpore's Eigh returned complex eigenvalues unsorted and read more than one triangle.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mindport.migrator import convert_source
from mindport.proofs.function import _load


def _outputs(value, framework):
    leaves = value if isinstance(value, (tuple, list)) else (value,)
    return [leaf.numpy() if framework == "torch" else leaf.asnumpy() for leaf in leaves]


def _check(body: str, arrays: list, rtol=1e-6, atol=1e-6, what=""):
    """Convert ``def run(a, b, ...): <body>`` and compare both frameworks' outputs (dtype, shape, values)."""
    names = ", ".join("abcdefg"[: len(arrays)])
    torch_code = f"import torch\nimport torch.nn.functional as F\n\n\ndef run({names}):\n    {body}\n"
    ms_code = convert_source(torch_code, "<dtypes>").code
    assert "mindport:" not in ms_code, ms_code
    import mindspore as ms

    with torch.no_grad():
        expected = _outputs(_load(torch_code, "torch").run(*[torch.tensor(a) for a in arrays]), "torch")
    got = _outputs(_load(ms_code, "ms").run(*[ms.Tensor(a.copy()) for a in arrays]), "ms")
    assert len(got) == len(expected), ms_code
    for t, m in zip(expected, got):
        assert m.dtype == t.dtype and m.shape == t.shape, f"{what}: {m.dtype}{m.shape} != {t.dtype}{t.shape}\n{ms_code}"
        np.testing.assert_allclose(m, t, rtol=rtol, atol=atol, err_msg=f"{what}\n{ms_code}")


# --------------------------------------------------------------------------------------------------- max_pool3d

POOL_CALLS = ["F.max_pool3d(a, 2{k})", "torch.max_pool3d(a, 2{k})", "F.max_pool3d_with_indices(a, 2{k})",
              "F.max_pool3d(a, 2, return_indices=True{k})"]
POOL_ARGS = ["", ", padding=1", ", stride=1, padding=1", ", ceil_mode=True", ", dilation=2", ", stride=(1, 2, 2)"]


@pytest.mark.parametrize("call", POOL_CALLS)
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "float32"])
def test_max_pool3d_integer_windows_of_negative_values(call, dtype):
    rng = np.random.default_rng(0)
    for shape in [(2, 3, 4, 6, 6), (3, 5, 4, 5)]:  # batched and unbatched
        low = 0 if dtype == "uint8" else -120
        x = rng.integers(low, low + 200, shape).astype(dtype)
        x[..., :2, :2, :2] = -np.arange(1, 9).reshape(2, 2, 2) if dtype != "uint8" else 3  # an all-negative window
        if dtype == "float32":
            x = x + rng.random(shape).astype(dtype)
        for extra in POOL_ARGS:
            if "torch.max_pool3d" in call and "dilation" in extra:
                continue
            _check(f"return {call.format(k=extra)}", [x], what=f"{call.format(k=extra)} {dtype} {shape}")


def test_max_pool3d_int64_extremes_within_the_documented_span():
    """Values near int64's limits pool exactly while their span fits in int64 (the shift is computed in int64)."""
    big = np.iinfo(np.int64).max // 2
    x = np.array([-big, -big + 7, big, -3, -big + 1, -5, 2, -big + 2], dtype=np.int64).reshape(1, 1, 2, 2, 2)
    _check("return F.max_pool3d(a, (1, 2, 2), return_indices=True)", [x], what="int64 extremes")


# ------------------------------------------------------------------------------------------ hinge_embedding_loss

@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_hinge_embedding_loss_integer_margin_and_dtype(dtype):
    """torch fills the margin into an integer input's dtype (truncated) and keeps the dtype (int64 when summed)."""
    rng = np.random.default_rng(1)
    x = rng.integers(-4, 5, (3, 4)).astype(dtype)
    y = rng.choice([-1, 1], (3, 4)).astype(dtype)
    for margin in ["1.0", "0.5", "2.75", "-1.5", "3"]:
        for r in (0, 2, 1):  # none, sum, mean
            if r == 1 and dtype.startswith("int"):
                continue  # torch: mean() of an integer tensor raises
            body = f"return torch.hinge_embedding_loss(a, b, {margin}, {r})"
            _check(body, [x, y], rtol=1e-5, atol=1e-5, what=f"{body} {dtype}")



# ------------------------------------------------------------------------------------------------------ bilinear

@pytest.mark.parametrize("call", ["F.bilinear(a, b, c{bias})", "torch.bilinear(a, b, c{bias})",
                                  "F.bilinear(input1=a, input2=b, weight=c{bias})"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_bilinear_keeps_the_inputs_dtype(call, dtype):
    """MindSpore's bidense returned int64 for int32 inputs without a bias."""
    rng = np.random.default_rng(2)
    for batch in [(3,), (2, 3)]:
        arrays = [rng.integers(-3, 4, (*batch, 4)), rng.integers(-3, 4, (*batch, 5)), rng.integers(-3, 4, (2, 4, 5)),
                  rng.integers(-3, 4, (2,))]
        arrays = [a.astype(dtype) for a in arrays]
        for bias in ["", ", bias=d"] + ([", d"] if "=" not in call else []):
            _check(f"return {call.format(bias=bias)}", arrays, rtol=1e-5, atol=1e-4, what=f"{call} {bias} {dtype}")


# --------------------------------------------------------------------------------------------------------- trapz

@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "float16", "int32", "int64"])
def test_trapz_in_the_inputs_dtype(dtype):
    """ops.trapz computed float64 in float32 and returned float32 for complex64 input."""
    rng = np.random.default_rng(3)
    for shape in [(2, 5), (5,), (3, 2, 4)]:
        y = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == "complex64" else 0)
        y = (rng.integers(-5, 6, shape) if dtype.startswith("int") else y).astype(dtype)
        tol = 2e-2 if dtype == "float16" else 1e-5
        for dim in (-1, 0):
            x1 = np.sort(rng.standard_normal(shape[dim])).astype("float32")
            xf = np.sort(rng.standard_normal(shape), axis=dim).astype("float64" if dtype == "float64" else "float32")
            _check(f"return torch.trapz(a, dim={dim})", [y], rtol=tol, atol=tol, what=f"{dtype} {shape} {dim}")
            for x in (x1, xf):
                _check(f"return torch.trapz(a, b, dim={dim})", [y, x], rtol=tol, atol=tol, what=f"{dtype} {shape}")


# ----------------------------------------------------------------------------------------------- linalg.eigvalsh

@pytest.mark.parametrize("dtype", ["complex64", "float32", "float64"])
def test_eigvalsh_of_complex_input_as_torch(dtype):
    """MindSpore's Eigh returned complex eigenvalues unsorted and read more than the UPLO triangle."""
    rng = np.random.default_rng(4)
    for shape in [(3, 3), (2, 4, 4)]:
        a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == "complex64" else 0)
        h = (a + np.swapaxes(a, -1, -2).conj()).astype(dtype)
        for m in (h, a.astype(dtype)):  # Hermitian, and any matrix: torch reads one triangle and the real diagonal
            for call in ["torch.linalg.eigvalsh(a)", "torch.linalg.eigvalsh(a, UPLO='U')"]:
                _check(f"return {call}", [m], rtol=1e-4, atol=1e-4, what=f"{call} {dtype} {shape}")
