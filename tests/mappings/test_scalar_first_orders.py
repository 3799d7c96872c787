"""torch's deprecated argument orders that put a scalar before the tensors, which torch 2.13 still accepts (with a
deprecation warning) and old model code still writes: DCCRN's complex batch norm does
``torch.addcmul(Vrr * Vii, -1, Vri, Vri)`` (first-contact batch 5). Bound to the documented signature
``(input, tensor1, tensor2, *, value=1)`` it was "too many positional arguments" (MP102) and the line stayed torch;
as a method (``x.addcmul(0.5, a, b)``) it was left as written and MindSpore's ``Tensor.addcmul`` read 0.5 as a
tensor. ``mindport.mappings.arguments.SCALAR_FIRST`` lists the orders: every one is checked here in torch against
the keyword form, and a program using each converts and matches torch."""
from __future__ import annotations

import textwrap
import warnings

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport import convert_source
from mindport.mappings.arguments import SCALAR_FIRST

SHAPES = {"input": (2, 3), "tensor1": (2, 3), "tensor2": (2, 3), "other": (2, 3), "mat1": (2, 4), "mat2": (4, 3),
          "mat": (2, 4), "vec": (4,), "vec1": (2,), "vec2": (3,), "batch1": (5, 2, 4), "batch2": (5, 4, 3)}
SCALARS = {"value": 0.5, "alpha": 2.0, "beta": -1.5}


INPUT = {"addmv": (2,), "baddbmm": (5, 2, 3)}  # the input's shape where it is not (2, 3)


def _tensors(name, names):
    rng = np.random.default_rng(0)
    out = {n: torch.from_numpy(rng.standard_normal(INPUT.get(name, SHAPES[n]) if n == "input" else SHAPES[n])
                               .astype(np.float32)) for n in names if n in SHAPES}
    if "tensor2" in out:
        out["tensor2"] = out["tensor2"].abs() + 1  # a divisor for addcdiv
    return out


@pytest.mark.parametrize("name", sorted(SCALAR_FIRST))
def test_every_order_is_torchs_own(name):
    """Each listed order, as a function, a method and an in-place method, gives torch's keyword form's result."""
    for order in SCALAR_FIRST[name]:
        tensors = _tensors(name, order)
        values = [tensors[n] if n in tensors else SCALARS[n] for n in order]
        keywords = {n: v for n, v in zip(order, values) if n != "input"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(torch, name)(tensors["input"], **keywords)
            torch.testing.assert_close(getattr(torch, name)(*values), want)
            method_values = [v for n, v in zip(order, values) if n != "input"]
            torch.testing.assert_close(getattr(tensors["input"], name)(*method_values), want)
            torch.testing.assert_close(getattr(tensors["input"].clone(), name + "_")(*method_values), want)


SOURCE = textwrap.dedent("""\
    import torch


    def run(x, a, b, m, m1, m2, v, r, v1, v2, i3, b1, b2):
        return (torch.addcmul(x, -1, a, b), torch.addcdiv(x, 0.5, a, b.abs() + 1), x.addcmul(0.5, a, b),
                x.clone().addcdiv_(0.5, a, b.abs() + 1), torch.addmm(0.5, m, 2.0, m1, m2), torch.addmm(0.5, m, m1, m2),
                m.addmm(0.5, 2.0, m1, m2), torch.addmv(0.5, m[0], 2.0, m1, v), torch.addr(0.5, r, 2.0, v1, v2),
                torch.addbmm(0.5, r, 2.0, b1, b2), torch.baddbmm(0.5, i3, b1, b2), torch.sub(x, 2, a),
                x.clone().add_(3, a))
""")


def test_a_program_in_the_old_orders_converts_and_matches_torch():
    result = convert_source(SOURCE)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    assert "x.addcmul(0.5, a, b)" not in result.code
    t_ns: dict = {}
    exec(compile(SOURCE, "torch_program", "exec"), t_ns)  # noqa: S102 - the test's own program
    m_ns: dict = {}
    exec(compile(result.code, "converted", "exec"), m_ns)  # noqa: S102
    rng = np.random.default_rng(1)
    shapes = [(3,), (3,), (3,), (2, 2), (2, 4), (4, 2), (4,), (2, 3), (2,), (3,), (5, 2, 3), (5, 2, 4), (5, 4, 3)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = t_ns["run"](*map(torch.from_numpy, arrays))
    got = m_ns["run"](*map(ms.Tensor, arrays))
    assert len(got) == len(want) == 13
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-5)
