"""torch's in-place ``_foreach_*_`` operations on lists of plain tensors (the mapping proofs update Parameters, the
only tensors a graph updates through a list): they match torch in PyNative, and inside a graph they raise mindport's
error instead of losing the update silently (mindport/runtime/foreach.py)."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
from mindspore import nn

from mindport.runtime import foreach as mp_foreach

SHAPES = [(2, 3), (4,), ()]


def _arrays(rng, positive=False):
    arrays = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    return [np.abs(a) + np.float32(0.5) for a in arrays] if positive else arrays


def _both(arrays):
    return [torch.tensor(a) for a in arrays], [ms.Tensor(a) for a in arrays]


# name -> operands after the list: (torch args, MindSpore args, torch kwargs, MindSpore kwargs), built from an rng
def _operand_cases(rng):
    t_other, m_other = _both(_arrays(rng, positive=True))
    t_a, m_a = _both(_arrays(rng))
    t_b, m_b = _both(_arrays(rng, positive=True))
    scalars = [0.5, 2.0, -1.5]
    cases = {name: [((), (), {}, {})] for name in ("neg_", "sqrt_", "reciprocal_", "abs_", "exp_", "sign_", "zero_")}
    for name in ("mul_", "div_", "maximum_", "minimum_", "clamp_min_", "clamp_max_"):
        cases[name] = [((0.75,), (0.75,), {}, {}), ((scalars,), (scalars,), {}, {}),
                       ((t_other,), (m_other,), {}, {})]
    cases["pow_"] = [((2.0,), (2.0,), {}, {}), ((t_other,), (m_other,), {}, {})]
    for name in ("add_", "sub_"):
        cases[name] = [((0.75,), (0.75,), {}, {}), ((t_other,), (m_other,), {"alpha": -0.5}, {"alpha": -0.5}),
                       ((scalars,), (scalars,), {}, {})]
    for name in ("addcmul_", "addcdiv_"):
        cases[name] = [((t_a, t_b), (m_a, m_b), {}, {}), ((t_a, t_b, -0.5), (m_a, m_b, -0.5), {}, {}),
                       ((t_a, t_b, scalars), (m_a, m_b, scalars), {}, {})]
    cases["lerp_"] = [((t_a, 0.25), (m_a, 0.25), {}, {})]
    cases["copy_"] = [((t_a,), (m_a,), {}, {})]
    return cases


NAMES = sorted(_operand_cases(np.random.default_rng(0)))


@pytest.mark.parametrize("name", NAMES)
def test_inplace_on_plain_tensors_matches_torch(name):
    rng = np.random.default_rng(1)
    for t_args, m_args, t_kwargs, m_kwargs in _operand_cases(rng)[name]:
        arrays = _arrays(rng, positive=name in ("sqrt_", "pow_"))
        t_list, m_list = _both(arrays)
        m_ids = [id(t) for t in m_list]
        t_ret = getattr(torch, f"_foreach_{name}")(t_list, *t_args, **t_kwargs)
        m_ret = getattr(mp_foreach, name)(m_list, *m_args, **m_kwargs)
        assert t_ret is t_list and m_ret is m_list  # torch 2.13 returns the list it updated
        assert [id(t) for t in m_list] == m_ids  # the same tensors, updated
        for t, m in zip(t_list, m_list):
            assert m.shape == tuple(t.shape) and m.dtype == ms.float32
            np.testing.assert_allclose(m.asnumpy(), t.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_inplace_on_plain_tensors_raises_in_a_graph(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a failed compile writes rank_0/om/analyze_fail.ir into the working folder
    _, m_args, _, m_kwargs = _operand_cases(np.random.default_rng(2))[name][0]
    fn = getattr(mp_foreach, name)

    def run(x, y, z):
        xs = [x.copy(), y.copy(), z.copy()]
        fn(xs, *m_args, **m_kwargs)
        return xs

    with pytest.raises(RuntimeError, match="mindport: torch._foreach_"):
        ms.jit(run)(*_both(_arrays(np.random.default_rng(3), positive=True))[1])


class _AdamState(nn.Cell):
    def __init__(self, params):
        super().__init__()
        self.exp_avg = ms.Parameter(ms.Tensor(np.zeros((2, 3), np.float32)), name="exp_avg")
        self.exp_avg_sq = ms.Parameter(ms.Tensor(np.zeros((2, 3), np.float32)), name="exp_avg_sq")
        self.p = ms.Parameter(ms.Tensor(params), name="p")

    def construct(self, grad):
        avgs, sqs, params = [self.exp_avg], [self.exp_avg_sq], [self.p]
        for _ in range(3):  # an optimizer's chained updates, three steps
            mp_foreach.mul_(avgs, 0.9)
            mp_foreach.add_(avgs, [grad], alpha=0.1)
            mp_foreach.mul_(sqs, 0.999)
            mp_foreach.addcmul_(sqs, [grad], [grad], 0.001)
            denom = mp_foreach.sqrt(sqs)
            mp_foreach.add_(denom, 1e-8)  # a plain list in PyNative only: this Cell runs compiled, see below
            mp_foreach.addcdiv_(params, avgs, denom, -0.01)
        return self.p + 0


class _AdamStateGraph(_AdamState):
    def construct(self, grad):
        avgs, sqs, params = [self.exp_avg], [self.exp_avg_sq], [self.p]
        for _ in range(3):
            mp_foreach.mul_(avgs, 0.9)
            mp_foreach.add_(avgs, [grad], alpha=0.1)
            mp_foreach.mul_(sqs, 0.999)
            mp_foreach.addcmul_(sqs, [grad], [grad], 0.001)
            denom = mp_foreach.add(mp_foreach.sqrt(sqs), 1e-8)  # out-of-place: denom is a plain list
            mp_foreach.addcdiv_(params, avgs, denom, -0.01)
        return self.p + 0


def test_chained_updates_of_parameters_match_torch_in_a_graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(4)
    params, grad = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    t_p, t_g = torch.tensor(params), torch.tensor(grad)
    t_avg, t_sq = torch.zeros(2, 3), torch.zeros(2, 3)
    for _ in range(3):
        torch._foreach_mul_([t_avg], 0.9)
        torch._foreach_add_([t_avg], [t_g], alpha=0.1)
        torch._foreach_mul_([t_sq], 0.999)
        torch._foreach_addcmul_([t_sq], [t_g], [t_g], 0.001)
        denom = torch._foreach_add(torch._foreach_sqrt([t_sq]), 1e-8)
        torch._foreach_addcdiv_([t_p], [t_avg], denom, -0.01)
    eager = _AdamState(params)(ms.Tensor(grad))
    graph = ms.jit(_AdamStateGraph(params).construct)(ms.Tensor(grad))
    np.testing.assert_allclose(eager.asnumpy(), t_p.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(graph.asnumpy(), t_p.numpy(), rtol=1e-5, atol=1e-7)
    # and the plain-list in-place update the eager Cell uses is refused in a graph, never computed wrong
    with pytest.raises(RuntimeError, match="mindport: torch._foreach_"):
        ms.jit(_AdamState(params).construct)(ms.Tensor(grad))
