"""mindport.runtime.distributions' Gamma, Chi2, Beta, Dirichlet, StudentT, Poisson, Binomial, Multinomial,
MultivariateNormal and kl_divergence against torch: every deterministic method by value, samples by shape and dtype,
float32 and float64."""
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


def _check(t, m, values=(), props=(), entropy=True, sample_shape=(4,)):
    for method, value in values:
        _same(getattr(t, method)(value), getattr(m, method)(_ms(value)), method)
    for prop in props:
        _same(getattr(t, prop), getattr(m, prop), prop)
    if entropy:
        _same(t.entropy(), m.entropy(), "entropy")
    expected, got = t.sample(sample_shape), m.sample(sample_shape)
    _same(expected.shape, got.shape, "sample shape")
    assert str(expected.dtype).split(".")[-1] == str(got.dtype).lower()
    _same(t.batch_shape, m.batch_shape, "batch_shape")
    _same(t.event_shape, m.event_shape, "event_shape")


@pytest.fixture(params=[torch.float32, torch.float64], ids=["float32", "float64"])
def data(request):
    gen = torch.Generator().manual_seed(3)
    draw = [torch.rand(2, 3, generator=gen, dtype=request.param) for _ in range(3)]
    return draw[0] + 0.5, draw[1] + 0.5, draw[2] * 0.8 + 0.1


def test_gamma_chi2_beta_student(data):
    a, b, x = data
    _check(torch_dist.Gamma(a, b), mp_dist.Gamma(_ms(a), _ms(b)), [("log_prob", x * 3), ("cdf", x * 3)],
           ["mean", "mode", "variance", "stddev"])
    _check(torch_dist.Chi2(a * 3), mp_dist.Chi2(_ms(a * 3)), [("log_prob", x * 3)], ["mean", "variance", "df"])
    _check(torch_dist.Beta(a, b), mp_dist.Beta(_ms(a), _ms(b)), [("log_prob", x)],
           ["mean", "mode", "variance", "concentration1", "concentration0"])
    _check(torch_dist.StudentT(a * 4, b, a), mp_dist.StudentT(_ms(a * 4), _ms(b), _ms(a)), [("log_prob", x)],
           ["mean", "mode", "variance"])
    low = torch.tensor([0.5, 1.5, 3.0], dtype=a.dtype)
    _check(torch_dist.StudentT(low), mp_dist.StudentT(_ms(low)), [], ["mean", "variance"])


def test_dirichlet_including_its_all_below_one_mode(data):
    a, _, _ = data
    conc = torch.cat([a, torch.full((1, 3), 0.3, dtype=a.dtype)])
    value = torch.softmax(torch.randn(3, 3, dtype=a.dtype), -1)
    _check(torch_dist.Dirichlet(conc), mp_dist.Dirichlet(_ms(conc)), [("log_prob", value)], ["mean", "mode", "variance"])


def test_counting_distributions(data):
    a, _, x = data
    counts = torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]], dtype=a.dtype)
    _check(torch_dist.Poisson(a * 3), mp_dist.Poisson(_ms(a * 3)), [("log_prob", counts)], ["mean", "mode", "variance"],
           entropy=False)
    for kwargs in ({"total_count": 5, "probs": x}, {"total_count": torch.tensor([[1.0, 5.0, 10.0]], dtype=a.dtype),
                                                    "logits": a - 1}):
        t, m = torch_dist.Binomial(**kwargs), mp_dist.Binomial(**{k: _ms(v) for k, v in kwargs.items()})
        _check(t, m, [("log_prob", counts.clamp(max=1))], ["mean", "mode", "variance"], entropy=False)
    probs = torch.tensor([0.3, 0.3, 0.4], dtype=a.dtype)
    _check(torch_dist.Multinomial(10, probs), mp_dist.Multinomial(10, _ms(probs)),
           [("log_prob", torch.tensor([3.0, 3.0, 4.0], dtype=a.dtype))], ["mean", "variance"], entropy=False,
           sample_shape=(50,))
    draws = mp_dist.Multinomial(7, _ms(probs)).sample((20,)).asnumpy()
    assert (draws.sum(-1) == 7).all()


@pytest.mark.parametrize("given", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal(given):
    loc = torch.tensor([[0.0, 1.0], [2.0, -1.0]], dtype=torch.float64)
    cov = torch.tensor([[[1.5, 0.2], [0.2, 0.8]], [[2.0, -0.4], [-0.4, 1.2]]], dtype=torch.float64)
    matrix = {"covariance_matrix": cov, "precision_matrix": torch.linalg.inv(cov),
              "scale_tril": torch.linalg.cholesky(cov)}[given]
    t = torch_dist.MultivariateNormal(loc, **{given: matrix})
    m = mp_dist.MultivariateNormal(_ms(loc), **{given: _ms(matrix)})
    _check(t, m, [("log_prob", torch.tensor([0.3, -0.2], dtype=torch.float64))],
           ["mean", "mode", "variance", "covariance_matrix", "scale_tril", "precision_matrix"], sample_shape=(3,))


def test_kl_divergence_pairs_and_register_kl(data):
    a, b, x = data
    probs = torch.softmax(torch.randn(2, 4, dtype=a.dtype), -1)
    pairs = [("Normal", (a, b), (b, a)), ("Beta", (a, b), (b, a)), ("Gamma", (a, b), (b, a)),
             ("Dirichlet", (a,), (b,)), ("Bernoulli", (x,), (1 - x,)), ("Categorical", (probs,), (probs.flip(-1),)),
             ("Exponential", (a,), (b,)), ("Laplace", (a, b), (b, a)), ("Uniform", (a, a + 1), (a - 1, a + 2)),
             ("Uniform", (a, a + 2), (a, a + 1)), ("Poisson", (a,), (b,))]
    for name, p_args, q_args in pairs:
        expected = torch_dist.kl_divergence(getattr(torch_dist, name)(*p_args), getattr(torch_dist, name)(*q_args))
        got = mp_dist.kl_divergence(getattr(mp_dist, name)(*map(_ms, p_args)), getattr(mp_dist, name)(*map(_ms, q_args)))
        _same(expected, got, name)
    with pytest.raises(NotImplementedError):
        mp_dist.kl_divergence(mp_dist.Normal(0.0, 1.0), mp_dist.Laplace(0.0, 1.0))

    class Rate(mp_dist.Exponential):
        pass

    mp_dist.register_kl(Rate, Rate)(lambda p, q: p.rate - q.rate)
    np.testing.assert_allclose(mp_dist.kl_divergence(Rate(_ms(a)), Rate(_ms(b))).asnumpy(), (a - b).numpy(), rtol=1e-6)
