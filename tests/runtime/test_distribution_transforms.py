"""mindport.runtime.distributions' transforms against torch.distributions.transforms: values, inverses,
log_abs_det_jacobian, shapes (also torch's errors on them), event dimensions, for scalar and tensor parameters."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.distributions as torch_dist

from mindport.runtime import distributions as mp_dist


def _ms(value):
    return ms.Tensor(value.detach().numpy()) if isinstance(value, torch.Tensor) else value


def _same(expected, got, what, rtol=1e-4, atol=1e-5):
    if isinstance(expected, torch.Tensor):
        assert tuple(expected.shape) == tuple(got.shape), what
        assert str(expected.dtype).split(".")[-1] == str(got.dtype).lower(), what
        np.testing.assert_allclose(got.asnumpy(), expected.detach().numpy(), rtol=rtol, atol=atol, err_msg=what)
    else:
        assert expected == got, (what, expected, got)


def _shape_or_error(fn, shape):
    try:
        return tuple(fn(shape))
    except Exception as exc:  # noqa: BLE001 - the error's type is what is compared
        return type(exc)


SIMPLE = [
    ("ExpTransform", ()), ("AbsTransform", ()), ("SigmoidTransform", ()), ("TanhTransform", ()),
    ("SoftplusTransform", ()), ("SoftmaxTransform", ()), ("StickBreakingTransform", ()),
    ("AffineTransform", (torch.tensor(1.0), torch.tensor(2.0))), ("AffineTransform", (0.5, -3.0)),
    ("AffineTransform", (torch.zeros(4), torch.linspace(1.0, 2.0, 4))),
    ("PowerTransform", (torch.tensor(2.0),)), ("PowerTransform", (torch.tensor([2.0, 3.0, 0.5, 1.0]),)),
]


@pytest.mark.parametrize(("name", "args"), SIMPLE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SIMPLE)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_transform_matches_torch(name, args, dtype):
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(1), dtype=dtype) * 0.9
    if name == "PowerTransform":
        x = x.abs() + 0.1
    args = tuple(a.to(dtype) if isinstance(a, torch.Tensor) else a for a in args)
    t, m = getattr(torch_dist, name)(*args), getattr(mp_dist, name)(*(_ms(a) for a in args))
    y, z = t(x), m(_ms(x))
    _same(y, z, "call")
    _same(t.inv(y), m.inv(z), "inverse", rtol=1e-3, atol=1e-4)
    try:
        expected = t.log_abs_det_jacobian(x, y)
    except NotImplementedError:
        expected = None
    if expected is not None:
        _same(expected, m.log_abs_det_jacobian(_ms(x), z), "log_abs_det_jacobian")
    for shape in ([1, 2], (3, 4), torch.Size([2, 3, 4]), (7,)):
        _same(_shape_or_error(t.forward_shape, shape), _shape_or_error(m.forward_shape, shape), "forward_shape")
        _same(_shape_or_error(t.inverse_shape, shape), _shape_or_error(m.inverse_shape, shape), "inverse_shape")
    assert (t.domain.event_dim, t.codomain.event_dim, t.bijective) == (m.domain.event_dim, m.codomain.event_dim,
                                                                      m.bijective)


@pytest.mark.parametrize("names", [["SoftmaxTransform"], ["ExpTransform", "AffineTransform"],
                                   ["StickBreakingTransform", "ExpTransform"], []])
def test_compose_matches_torch(names):
    def build(module):
        return [getattr(module, n)(1.0, 2.0) if n == "AffineTransform" else getattr(module, n)() for n in names]

    t, m = torch_dist.ComposeTransform(build(torch_dist)), mp_dist.ComposeTransform(build(mp_dist))
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    y, z = t(x), m(_ms(x))
    _same(y, z, "call")
    _same(t.inv(y), m.inv(z), "inverse", rtol=1e-3, atol=1e-4)
    if "SoftmaxTransform" not in names:  # torch has no log_abs_det_jacobian for it (NotImplementedError)
        _same(t.log_abs_det_jacobian(x, y), m.log_abs_det_jacobian(_ms(x), z), "log_abs_det_jacobian")
    assert tuple(t.forward_shape((3, 4))) == tuple(m.forward_shape((3, 4)))
    assert (t.domain.event_dim, t.codomain.event_dim) == (m.domain.event_dim, m.codomain.event_dim)


def test_independent_reshape_cat_stack_and_cdf_transforms():
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    x[0, :2] = torch.tensor([-3.5673, 3.2])  # the tails, where MindSpore's own erfinv (an icdf's inverse) is wrong
    pairs = [(torch_dist.IndependentTransform(torch_dist.ExpTransform(), 1),
              mp_dist.IndependentTransform(mp_dist.ExpTransform(), 1), x),
             (torch_dist.ReshapeTransform((2, 3), (3, 2)), mp_dist.ReshapeTransform((2, 3), (3, 2)), torch.randn(4, 2, 3)),
             (torch_dist.CatTransform([torch_dist.ExpTransform(), torch_dist.AffineTransform(1.0, 3.0)], 0, [1, 2]),
              mp_dist.CatTransform([mp_dist.ExpTransform(), mp_dist.AffineTransform(1.0, 3.0)], 0, [1, 2]), x),
             (torch_dist.StackTransform([torch_dist.ExpTransform(), torch_dist.SigmoidTransform()], 1),
              mp_dist.StackTransform([mp_dist.ExpTransform(), mp_dist.SigmoidTransform()], 1), torch.randn(5, 2)),
             (torch_dist.CumulativeDistributionTransform(torch_dist.Normal(0.0, 1.0)),
              mp_dist.CumulativeDistributionTransform(mp_dist.Normal(0.0, 1.0)), x)]
    for t, m, value in pairs:
        y, z = t(value), m(_ms(value))
        _same(y, z, type(t).__name__)
        _same(t.inv(y), m.inv(z), type(t).__name__ + " inverse", rtol=1e-3, atol=1e-4)
        _same(t.log_abs_det_jacobian(value, y), m.log_abs_det_jacobian(_ms(value), z), type(t).__name__ + " ladj")
    reshape_t, reshape_m = pairs[1][0], pairs[1][1]
    for shape in ((4, 2, 3), [4, 2, 3], (2, 2)):
        _same(_shape_or_error(reshape_t.forward_shape, shape), _shape_or_error(reshape_m.forward_shape, shape), "rs")


@pytest.mark.parametrize("prob", [1.8e-4, 1e-3, 0.02, 0.5, 0.98, 0.999, 0.9998])
def test_normal_icdf_in_the_tails_matches_torch(prob):
    """Normal.icdf is torch's loc + scale * erfinv(2p - 1) * sqrt(2) with the runtime's guarded erfinv: MindSpore 2.10's
    ops.erfinv is wrong near +-1 (icdf(1.8e-4) came out -3.35 instead of -3.567)."""
    value = torch.full((2, 2), prob)
    t, m = torch_dist.Normal(torch.tensor(0.5), torch.tensor(2.0)), mp_dist.Normal(ms.Tensor(0.5), ms.Tensor(2.0))
    _same(t.icdf(value), m.icdf(_ms(value)), f"Normal.icdf({prob})", rtol=1e-4, atol=1e-4)
