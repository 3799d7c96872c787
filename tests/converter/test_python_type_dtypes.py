"""Python's own types where torch takes a dtype: ``~torch.tril(torch.ones(n, n)).to(bool)`` (CORL's Decision
Transformer causal mask, first-contact batch 5), ``x.to(float)``, ``x.to(int)``, ``x.to(dtype=complex)``. torch reads
them as bool, int64, float64 and complex128; ``mindport.runtime.tensor.to`` (what ``x.to(a)`` becomes when the
converter cannot tell what ``a`` is) refused them: "to() received an invalid argument: expected a dtype, a device or
a tensor". Compared with torch: values and dtypes."""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import torch

from mindport import convert_source

SOURCE = textwrap.dedent("""\
    import torch


    def casts(x, n):
        mask = ~torch.tril(torch.ones(n, n)).to(bool)
        return mask, x.to(bool), x.to(int), x.to(float), x.to(dtype=complex), x.to(float).to(int)
""")


def test_python_types_cast_as_torch_reads_them():
    result = convert_source(SOURCE)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    t_ns: dict = {}
    exec(compile(SOURCE, "torch_program", "exec"), t_ns)  # noqa: S102 - the test's own program
    m_ns: dict = {}
    exec(compile(result.code, "converted", "exec"), m_ns)  # noqa: S102
    x = np.array([[0.0, 1.5], [-2.7, 3.0]], np.float32)
    want = t_ns["casts"](torch.from_numpy(x), 3)
    got = m_ns["casts"](ms.Tensor(x), 3)
    for w, g in zip(want, got):
        assert str(g.dtype).lower().replace("_", "") == str(w.dtype).removeprefix("torch.").replace("_", ""), (g.dtype, w.dtype)
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
