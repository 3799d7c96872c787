"""mindport.runtime.distributions' Gumbel, Cauchy, LogNormal, Geometric, TransformedDistribution, Independent and the
Distribution base against torch.distributions: deterministic methods by value, samples by shape and dtype."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.distributions as torch_dist

from mindport.runtime import distributions as mp_dist


def _ms(value):
    return ms.Tensor(value.detach().numpy()) if isinstance(value, torch.Tensor) else value


def _same(expected, got, what):
    if isinstance(expected, torch.Tensor):
        assert tuple(expected.shape) == tuple(got.shape), what
        assert str(expected.dtype).split(".")[-1] == str(got.dtype).lower(), what
        np.testing.assert_allclose(got.asnumpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=what)
    else:
        assert tuple(expected) == tuple(got), (what, expected, got)


GEN = torch.Generator().manual_seed(5)
LOC, SCALE = torch.randn(2, 3, generator=GEN), torch.rand(2, 3, generator=GEN) + 0.5
VALUE, PROB = torch.randn(2, 3, generator=GEN), torch.rand(2, 3, generator=GEN) * 0.8 + 0.1


@pytest.mark.parametrize("name", ["Gumbel", "Cauchy", "LogNormal"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_location_scale_families(name, dtype):
    loc, scale, value, prob = (v.to(dtype) for v in (LOC, SCALE, VALUE, PROB))
    if name == "LogNormal":
        value = value.abs() + 0.1
    t, m = getattr(torch_dist, name)(loc, scale), getattr(mp_dist, name)(_ms(loc), _ms(scale))
    for method, arg in (("log_prob", value), ("cdf", value), ("icdf", prob)):
        if name == "LogNormal" and method == "icdf":
            continue
        _same(getattr(t, method)(arg), getattr(m, method)(_ms(arg)), f"{name}.{method}")
    for prop in ("mean", "mode", "variance", "stddev"):
        _same(getattr(t, prop), getattr(m, prop), f"{name}.{prop}")
    _same(t.entropy(), m.entropy(), f"{name}.entropy")
    for shape in ((), (4,), (5, 2)):
        _same(t.sample(shape).shape, m.sample(shape).shape, "sample shape")
        assert str(m.rsample(shape).dtype).lower() == str(dtype).split(".")[-1]


@pytest.mark.parametrize("given", ["probs", "logits"])
def test_geometric(given):
    kwargs = {"probs": PROB} if given == "probs" else {"logits": VALUE}
    t, m = torch_dist.Geometric(**kwargs), mp_dist.Geometric(**{k: _ms(v) for k, v in kwargs.items()})
    counts = torch.tensor([[0.0, 3.0, 1.0], [2.0, 0.0, 7.0]])
    _same(t.log_prob(counts), m.log_prob(_ms(counts)), "log_prob")
    for prop in ("mean", "mode", "variance", "probs"):
        _same(getattr(t, prop), getattr(m, prop), prop)
    _same(t.entropy(), m.entropy(), "entropy")
    draws = m.sample((200,))
    assert tuple(draws.shape) == (200, 2, 3)
    assert float(draws.min()) >= 0 and bool((draws == ms.ops.floor(draws)).all())


@pytest.mark.parametrize("case", ["sigmoid", "exp", "stick", "affine-exp"])
def test_transformed_distribution(case):
    base_t = torch_dist.Normal(torch.zeros(2, 3), torch.ones(2, 3))
    base_m = mp_dist.Normal(_ms(torch.zeros(2, 3)), _ms(torch.ones(2, 3)))

    def parts(module):
        return {"sigmoid": [module.SigmoidTransform()], "exp": module.ExpTransform(),
                "stick": [module.StickBreakingTransform()],
                "affine-exp": [module.AffineTransform(1.0, 2.0), module.ExpTransform()]}[case]

    t = torch_dist.TransformedDistribution(base_t, parts(torch_dist))
    m = mp_dist.TransformedDistribution(base_m, parts(mp_dist))
    _same(t.batch_shape, m.batch_shape, "batch_shape")
    _same(t.event_shape, m.event_shape, "event_shape")
    _same(t.sample((5,)).shape, m.sample((5,)).shape, "sample")
    y = t.sample()
    _same(t.log_prob(y), m.log_prob(_ms(y)), "log_prob")
    if case != "stick":
        _same(t.cdf(y), m.cdf(_ms(y)), "cdf")


def test_independent_and_base_classes():
    base_t, base_m = torch_dist.Normal(LOC, SCALE), mp_dist.Normal(_ms(LOC), _ms(SCALE))
    for n in (0, 1, 2):
        t, m = torch_dist.Independent(base_t, n), mp_dist.Independent(base_m, n)
        _same(t.batch_shape, m.batch_shape, "batch_shape")
        _same(t.event_shape, m.event_shape, "event_shape")
        _same(t.log_prob(VALUE), m.log_prob(_ms(VALUE)), "log_prob")
        _same(t.entropy(), m.entropy(), "entropy")
    with pytest.raises(ValueError):
        mp_dist.Independent(base_m, 3)
    d = mp_dist.Distribution((2,), (3,))
    assert (d.batch_shape, d.event_shape) == (tuple(torch_dist.Distribution(torch.Size([2]), torch.Size([3]),
                                                                            validate_args=False).batch_shape), (3,))
    assert mp_dist.ExponentialFamily().batch_shape == ()
