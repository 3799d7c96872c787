"""torch takes numpy's names for some parameters (``x.sum(axis=1, keepdims=True)``, ``x.max(axis=1)``): the converter
binds them as torch does and writes the MindSpore call with the right names, so the port gives torch's results
(MindSpore's ``Tensor.max(axis=1)`` would give no indices, ``Tensor.mean(axis=..., keepdims=...)`` raises).
Converting the output again changes nothing."""
from __future__ import annotations

import numpy as np
import pytest

from mindport import convert_source

CALLS = [
    "x.max(axis=1)", "x.min(axis=-1, keepdims=True)", "x.sum(axis=1, keepdims=True)", "x.mean(axis=-1)",
    "x.mean(axis=0, keepdims=True)", "x.std(axis=1)", "x.prod(axis=1)", "x.argmax(axis=1)", "x.cumsum(axis=2)",
    "x.squeeze(axis=1)", "x.unsqueeze(axis=0)", "x.softmax(axis=-1)", "x.any(axis=1)",
    "torch.sum(x, axis=1, keepdims=True)", "torch.max(x, axis=2)", "torch.mean(x, axis=(0, 2))",
]


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _flat(item)]
    return [value]


@pytest.mark.parametrize("call", CALLS)
def test_numpy_names_convert_to_torchs_meaning(call):
    import mindspore as ms
    import torch

    source = f"import torch\n\n\ndef f(x):\n    return {call}\n"
    result = convert_source(source)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert convert_source(result.code).code == result.code
    x = np.random.default_rng(0).standard_normal((2, 1, 4)).astype(np.float32)
    if "squeeze" not in call:
        x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    torch_ns: dict = {}
    exec(compile(source, "torch_f", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(result.code, "ms_f", "exec"), ms_ns)
    want = _flat(torch_ns["f"](torch.from_numpy(x)))
    got = _flat(ms_ns["f"](ms.Tensor(x)))
    assert len(got) == len(want), result.code
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-6, err_msg=result.code)
