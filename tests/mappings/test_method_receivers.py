"""torch.Tensor method entries apply only to tensors: the same method name on a numpy array, a list, a dict or a
string is never rewritten (and still runs), while on a tensor it is rewritten and runs on MindSpore with torch's
values."""
from __future__ import annotations

import numpy as np
import pytest

from mindport.migrator import convert_source

SOURCE = '''import numpy as np
import torch


def run(t):
    a = np.arange(12.0).reshape(3, 4)
    b = a.transpose(1, 0)
    c = a.sum(axis=0)
    m = a.max(axis=1)
    d = {"k": 1}
    e = d.get("k")
    s = "a,b"
    parts = s.split(",")
    lst = [3, 1, 2]
    n = lst.index(1)
    y = t * 2
    z = y.transpose(0, 1)
    v = y.var(1, keepdim=True)
    r = y.repeat(2, 1)
    return b, c, m, e, parts, n, z, v, r
'''

PYTHON_LINES = (
    "b = a.transpose(1, 0)",
    "c = a.sum(axis=0)",
    "m = a.max(axis=1)",
    'e = d.get("k")',
    'parts = s.split(",")',
    "n = lst.index(1)",
)


@pytest.fixture(scope="module")
def converted():
    result = convert_source(SOURCE, "<receivers>")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.code


@pytest.mark.parametrize("line", PYTHON_LINES)
def test_non_tensor_receivers_are_left_alone(converted, line):
    assert line in converted


def test_tensor_receivers_are_rewritten(converted):
    assert "z = y.swapaxes(axis0=0, axis1=1)" in converted
    assert "v = mp_math.var(y, 1, 1, True)" in converted  # the empty-extent guard (mindport.runtime.math.var)
    assert "r = y.tile((2, 1))" in converted  # one tuple: a second pass reads it the same
    assert "y.transpose(" not in converted


def _load(code):
    namespace: dict = {}
    exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102 - test snippet
    return namespace["run"]


def test_both_run_with_equal_values(converted):
    import mindspore as ms
    import torch

    data = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    t_out = _load(SOURCE)(torch.tensor(data))
    m_out = _load(converted)(ms.Tensor(data))
    for t_val, m_val in zip(t_out[:6], m_out[:6]):  # the numpy / Python results: the same code ran
        if isinstance(t_val, np.ndarray):
            np.testing.assert_array_equal(t_val, m_val)
        else:
            assert t_val == m_val
    for t_val, m_val in zip(t_out[6:], m_out[6:]):  # the tensor results: torch vs MindSpore
        t_arr, m_arr = t_val.numpy(), m_val.asnumpy()
        assert t_arr.shape == m_arr.shape and t_arr.dtype == m_arr.dtype
        np.testing.assert_allclose(m_arr, t_arr, rtol=1e-5, atol=1e-6)


def test_real_and_imag_become_calls_on_tensors_only():
    import mindspore as ms

    source = ("import numpy as np\nimport torch\n\n\ndef run(r, theta):\n    a = np.array([1 + 2j])\n"
              "    z = torch.polar(r, theta)\n    return z.real, z.imag, a.real, a.imag\n")
    result = convert_source(source)
    assert not result.diagnostics
    assert "z.real()" in result.code and "a.real," in result.code
    namespace: dict = {}
    exec(compile(result.code, "converted", "exec"), namespace)
    r, theta = np.array([2.0], np.float32), np.array([0.5], np.float32)
    zr, zi, ar, ai = namespace["run"](ms.Tensor(r), ms.Tensor(theta))
    np.testing.assert_allclose(zr.asnumpy(), r * np.cos(theta), rtol=1e-6)
    np.testing.assert_allclose(zi.asnumpy(), r * np.sin(theta), rtol=1e-6)
    assert ar.tolist() == [1.0] and ai.tolist() == [2.0]
    assert convert_source(result.code).code == result.code  # idempotent
