"""A numpy array on the right of a tensor's arithmetic operator (batch 17 first contact,
oliverguhr/transformer-time-series-prediction's PositionalEncoding: ``position * div_term[0::2]`` with ``div_term =
1 / (10000 ** (2 * np.arange(d_model) / d_model))``, an ndarray): torch's Tensor hands the operation to numpy (its
operator returns NotImplemented, numpy computes on the tensor's values and torch's ``__array_wrap__`` makes the
result a tensor), so the result has numpy's dtype (float32 tensor * int64 array is float64). MindSpore's operators
refused the ndarray ("Failed calling Mul with Mul()(input=Tensor, other=<class 'numpy.ndarray'>)"): the class and its
two models did not build. Expected values and dtypes are torch's, computed here; the module runs converted on
MindSpore."""
from __future__ import annotations

import itertools
import operator
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from mindport import convert_source  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "converter"))
from port_check import assert_port_matches_in_mode  # noqa: E402

SOURCE = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn


    class PositionalEncoding(nn.Module):
        def __init__(self, d_model=6, max_len=10):
            super().__init__()
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = 1 / (10000 ** ((2 * np.arange(d_model)) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term[0::2])
            pe[:, 1::2] = torch.cos(position * div_term[1::2])
            self.register_buffer('pe', pe.unsqueeze(0).transpose(0, 1) - np.ones(d_model, dtype=np.float32))

        def forward(self, x):
            return x + self.pe[:x.size(0), :]
""")

OPS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow)


def test_tensor_operator_numpy_array_matches_torch():
    import mindspore as ms
    import torch

    import mindport.runtime.numpy_ints  # noqa: F401 - what converted code loads with the runtime

    dtypes = ("float32", "float64", "int64", "int32")
    for td, nd, op in itertools.product(dtypes, dtypes, OPS):
        base = np.arange(1, 7).reshape(2, 3).astype(td)
        arr = np.arange(1, 4).astype(nd)
        want = op(torch.from_numpy(base.copy()), arr)
        got = op(ms.Tensor(base.copy()), arr)
        assert isinstance(got, ms.Tensor), (td, nd, op, type(got))
        assert str(got.asnumpy().dtype) == str(want.numpy().dtype), (td, nd, op, got.dtype, want.dtype)
        np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-6, err_msg=f"{td} {nd} {op}")
    m = np.arange(6, dtype=np.float32).reshape(3, 2)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose((ms.Tensor(x) @ m).asnumpy(), (torch.from_numpy(x) @ m).numpy())
    np.testing.assert_allclose((np.arange(1, 4, dtype=np.float32) / ms.Tensor(x)).asnumpy(),
                               (np.arange(1, 4, dtype=np.float32) / torch.from_numpy(x)).numpy())


def test_positional_encoding_with_numpy_terms_builds_and_matches(tmp_path):
    code = convert_source(SOURCE).code
    x = np.random.default_rng(0).standard_normal((4, 1, 6)).astype(np.float32)
    assert_port_matches_in_mode(SOURCE, code, "PositionalEncoding", [x], tmp_path, "np_operand", "pynative", atol=1e-6)
