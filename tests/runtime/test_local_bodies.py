"""Every file-local native body (mindport/mappings/data/local/bodies.toml) against torch and against the runtime
function it stands for, in float16, float32 and float64: values over |x| in 0..30 with +-inf and NaN, and the
gradient. A body the converter writes into a port must compute what the runtime function computes, to torch's
precision (the sync check between the two implementations)."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from mindport.mappings.local_bodies import local_bodies

# runtime target -> (torch's function, {dtype: value atol}, gradient atol in float32): torch's reference per body;
# a body with no reference here fails test_every_body_has_a_reference
REFERENCES = {
    "mindport.runtime.math.tanh": ("tanh", {"float16": 1e-3, "float32": 2e-7, "float64": 1e-15}, 1e-6),
}


def test_every_body_has_a_reference():
    assert set(local_bodies()) == set(REFERENCES)


def _body(runtime, tmp_path, monkeypatch):
    """The body as written (a module file of its own: GRAPH_MODE's parser reads the source), and a Cell giving its
    gradient (``ms.grad`` of the body: the gradient of its sum)."""
    body = local_bodies()[runtime]
    module = f"local_body_{body.name.strip('_')}"
    (tmp_path / f"{module}.py").write_text(
        f"import mindspore\n\n\n{body.source}\n\nclass Grad(mindspore.nn.Cell):\n"
        f"    def construct(self, x):\n        return mindspore.grad({body.name})(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = importlib.import_module(module)
    return getattr(loaded, body.name), loaded.Grad


def _runtime(runtime):
    module, _, name = runtime.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _inputs(dtype):
    grid = np.linspace(-30.0, 30.0, 1201)
    fine = np.linspace(-1e-3, 1e-3, 41)
    return np.concatenate([grid, fine, [0.0, -0.0, 1e-7, -1e-7, np.inf, -np.inf, np.nan]]).astype(dtype)


@pytest.mark.parametrize("runtime", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_body_matches_torch_and_the_runtime(runtime, dtype, tmp_path, monkeypatch):
    import mindspore as ms
    import torch

    name, atols, _ = REFERENCES[runtime]
    x = _inputs(dtype)
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    body = _body(runtime, tmp_path, monkeypatch)[0](ms.Tensor(x)).asnumpy()
    runtime_out = _runtime(runtime)(ms.Tensor(x)).asnumpy()
    assert body.dtype == want.dtype == runtime_out.dtype
    np.testing.assert_allclose(body, want, rtol=0, atol=atols[dtype], equal_nan=True)
    np.testing.assert_array_equal(body, runtime_out)


@pytest.mark.parametrize("runtime", sorted(REFERENCES))
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_body_gradient_matches_torch(runtime, mode, tmp_path, monkeypatch):
    import mindspore as ms
    import torch

    from tests.converter.port_check import run_in_mode

    name, _, atol = REFERENCES[runtime]
    x = _inputs("float32")
    x = x[np.isfinite(x)]
    t = torch.from_numpy(x).requires_grad_(True)
    getattr(torch, name)(t).sum().backward()
    grad = _body(runtime, tmp_path, monkeypatch)[1]
    got = run_in_mode(grad(), [ms.Tensor(x)], mode).asnumpy()
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, t.grad.numpy(), rtol=0, atol=atol)
