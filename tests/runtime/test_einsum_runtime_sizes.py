"""``einsum`` of an operand whose extent GRAPH_MODE knows only at run time (mindport.runtime.math.einsum), and the
two graph paths that led a mixture-of-experts router there (``max`` of a tensor and a number, ``one_hot`` of a tensor
depth).

Measured on MindSpore 2.10 before, GRAPH_MODE (PyNative matched torch):

* ``einsum`` planned its contraction from the operands' shapes at compile time (a constexpr); an operand with a
  data-dependent extent (``ops.one_hot`` of a depth read from a tensor: the extent is None while compiling) stopped it
  with "'>' not supported between instances of 'NoneType' and 'int'".
* ``max(index.max() + 1, n)`` (a tensor and a Python number) was interpreted by MindSpore's JIT Fallback; its result,
  of unknown type and shape, given to ``one_hot`` as the depth, made the one-hot of unknown dtype too, and einsum's
  dtype promotion (a constexpr) was handed a tensor: "The tensor should have only one element, but got 0" (trials
  entry moe/moe, lucidrains' mixture-of-experts ``safe_one_hot``).
* ``mindport.runtime.nn_functional.one_hot`` tested a tensor depth with ``depth < 0``: a run-time branch in a graph,
  whose two depths joined into a value of unknown type (the same error after it).

Expected values come from torch (the converted fixture) and from torch.einsum (the runtime cases).
"""
from __future__ import annotations

import textwrap

import mindspore as ms
import numpy as np
import pytest
import torch
from mindspore import nn, ops

from mindport import transfer_weights
from mindport.runtime import math as mp_math
from tests.converter.port_check import run_in_mode, torch_and_converted

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def capped_one_hot(index, length):
        top = index.max() + 1
        return F.one_hot(index, max(top + 1, length))[..., :length]


    class Router(nn.Module):
        def __init__(self, dim, experts, slots):
            super().__init__()
            self.score = nn.Linear(dim, experts)
            self.out = nn.Linear(dim, dim)
            self.experts = experts
            self.slots = slots

        def forward(self, x):
            s = self.score(x).softmax(-1)
            choice = F.one_hot(s.argmax(-1), self.experts)
            pos = ((torch.cumsum(choice, dim=1) - 1) * choice).sum(-1)
            slot = capped_one_hot(pos, self.slots).float()
            combine = s[..., None] * slot[..., None, :]
            per_slot = torch.einsum('bnec,bnd->ebcd', combine, x)
            y = self.out(per_slot)
            return torch.einsum('ebcd,bnec->bnd', y, combine), torch.einsum('bnec,bnec->b', combine, combine)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_router_with_a_data_dependent_one_hot_matches_torch(tmp_path, monkeypatch, mode):
    t_ns, m_ns = torch_and_converted(SOURCE, f"einsum_runtime_sizes_{mode}", tmp_path, monkeypatch)
    torch.manual_seed(0)
    t_model = t_ns["Router"](8, 3, 2).eval()
    m_model = m_ns["Router"](8, 3, 2)
    m_model.set_train(False)
    transfer_weights(t_model.state_dict(), m_model)
    x = np.random.default_rng(1).standard_normal((2, 6, 8)).astype(np.float32)
    with torch.no_grad():
        want = t_model(torch.from_numpy(x))
    got = run_in_mode(m_model, [ms.Tensor(x)], mode)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    assert float(np.abs(want[0].numpy()).max()) > 0  # the capped one-hot kept some positions


class _WithRuntimeExtent(nn.Cell):
    """``einsum(equation, ...)`` where ``D`` is a one-hot whose depth (``index.max() + 1``) GRAPH_MODE reads at run
    time; the other operands are given."""

    def __init__(self, equation, order):
        super().__init__()
        self.equation = equation
        self.order = order

    def construct(self, index, a, b):
        d = ops.one_hot(index, index.max() + 1, ms.Tensor(1.0, ms.float32), ms.Tensor(0.0, ms.float32))
        named = {"D": d, "a": a, "b": b}
        return mp_math.einsum(self.equation, *[named[k] for k in self.order])


# (equation, operand order, shape of a, shape of b); D is (6, 4) once run
CASES = [
    ("nk,nd->kd", "Da", (6, 3), (1,)),          # the run-time extent in the output
    ("nk,kd->nd", "Da", (4, 3), (1,)),          # the same label known from another operand
    ("nk,nk->n", "DD", (1,), (1,)),             # summed out
    ("nk,n,nk->k", "DaD", (6,), (1,)),          # three operands
    ("nk,nk->nk", "Da", (6, 1), (1,)),          # a size-1 axis broadcast to the run-time extent
    ("nk,nk", "Da", (6, 4), (1,)),              # implicit output: everything summed
    ("...k,nd->...d", "Da", (6, 2), (1,)),      # '...'
    ("nk,kk->n", "Da", (4, 4), (1,)),           # a diagonal of a given operand
    ("nk,bnd->bkd", "Db", (1,), (2, 6, 3)),     # batched
]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("equation, order, a_shape, b_shape", CASES, ids=[c[0] for c in CASES])
def test_einsum_with_an_extent_known_at_run_time_matches_torch(equation, order, a_shape, b_shape, mode):
    rng = np.random.default_rng(2)
    index = np.array([0, 3, 1, 3, 2, 0], np.int64)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    d = np.eye(4, dtype=np.float32)[index]
    named = {"D": torch.from_numpy(d), "a": torch.from_numpy(a), "b": torch.from_numpy(b)}
    want = torch.einsum(equation, *[named[k] for k in order]).numpy()
    got = run_in_mode(_WithRuntimeExtent(equation, order), [ms.Tensor(index), ms.Tensor(a), ms.Tensor(b)], mode)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


class _Extremes(nn.Cell):
    def construct(self, t, x):
        top = t.max()
        return max(top + 1, 4), max(2, top, 1), min(top, 2.5), min(x.sum(), 100.0, top)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("values", [[0, 5, 2], [0, 1, 1]])
def test_max_min_of_tensors_and_numbers_keep_python_values(values, mode):
    """Python's ``max``/``min`` (what torch runs) of a 0-d tensor and numbers; in a graph the same values, a tensor."""
    x = np.array([0.5, -0.25], np.float32)
    tt = torch.tensor(values)
    top = tt.max()
    want = [max(top + 1, 4), max(2, top, 1), min(top, 2.5), min(torch.from_numpy(x).sum(), 100.0, top)]
    got = run_in_mode(_Extremes(), [ms.Tensor(np.array(values, np.int64)), ms.Tensor(x)], mode)
    for g, w in zip(got, want):
        assert float(g) == pytest.approx(float(w))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_einsum_with_an_empty_axis_matches_torch(mode):
    """An empty axis (0) is an extent like any other: ``ij,jk->ik`` of (2, 0) and (0, 3) is zeros (2, 3)."""

    class _Empty(nn.Cell):
        def construct(self, a, b, c):
            return mp_math.einsum("ij,jk->ik", a, b), mp_math.einsum("ij,kj->ikj", a, c)

    a, b, c = (np.ones(s, np.float32) for s in ((2, 0), (0, 3), (1, 0)))
    want = (torch.einsum("ij,jk->ik", torch.from_numpy(a), torch.from_numpy(b)),
            torch.einsum("ij,kj->ikj", torch.from_numpy(a), torch.from_numpy(c)))
    got = run_in_mode(_Empty(), [ms.Tensor(a), ms.Tensor(b), ms.Tensor(c)], mode)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
