"""torch.distributions on MindSpore tensors: the distributions of its tables (Normal, Categorical, OneHotCategorical,
the relaxed/Concrete ones, mixtures, ...), the transforms, TransformedDistribution/Independent and kl_divergence.

``mindspore.nn.probability.distribution`` has other names and arguments (``Normal(mean, sd)``, ``prob``/``var``
methods, a ``dtype`` per instance) and on 2.10 CPU several of its methods raise NotImplementedError, so converted code
imports this module instead. The classes keep torch's constructor arguments, properties (``mean``, ``mode``,
``variance``, ``stddev``, ``probs``, ``logits``, ``batch_shape``, ``event_shape``) and methods (``log_prob``, ``cdf``,
``icdf``, ``entropy``, ``sample``, ``rsample``) with torch's formulas; ``sample``'s values are random draws (same
shapes and dtypes as torch's, not the same numbers). ``validate_args`` is accepted and ignored.
"""
from __future__ import annotations

import math

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from mindport.runtime import _float_limits as _limits
from mindport.runtime import special as _special
from mindport.runtime._graph import host_only as _host_only


def _tensor(value):
    if isinstance(value, Tensor):
        return value if value.dtype in (ms.float16, ms.float32, ms.float64) else value.astype(ms.float32)
    return Tensor(value, ms.float32)


def _shape(sample_shape) -> tuple:
    if isinstance(sample_shape, int):
        return (sample_shape,)
    return tuple(int(s) for s in sample_shape)


def _broadcast(*values):
    """torch's broadcast_all: tensors broadcast together; Python numbers take the tensors' float dtype."""
    dtype = next((_tensor(v).dtype for v in values if isinstance(v, Tensor)), ms.float32)
    tensors = [_tensor(v) if isinstance(v, Tensor) else Tensor(v, dtype) for v in values]
    shape = tuple(np.broadcast_shapes(*(t.shape for t in tensors)))
    return [ops.broadcast_to(t, shape) if t.shape != shape else t for t in tensors]


class Distribution:
    """The shared part: shapes, ``sample`` through ``rsample`` without gradients, ``stddev`` from ``variance``."""

    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = tuple(batch_shape), tuple(event_shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    @property
    def stddev(self):
        return ops.sqrt(self.variance)

    def sample(self, sample_shape=()):
        return ops.stop_gradient(self.rsample(sample_shape))

    def sample_n(self, n):
        return self.sample((n,))

    def perplexity(self):
        return ops.exp(self.entropy())

    def __repr__(self):
        return f"{type(self).__name__}()"


class Normal(Distribution):
    """torch.distributions.Normal(loc, scale)."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return ops.standard_normal(shape).astype(self.loc.dtype) * self.scale + self.loc

    def log_prob(self, value):
        value = _tensor(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - ops.log(self.scale) - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        return 0.5 * (1 + ops.erf((_tensor(value) - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        # torch's formula; MindSpore's own erfinv is wrong near +-1 (the tails): the runtime's guarded erfinv
        return self.loc + self.scale * _special.erfinv(2 * _tensor(value) - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + ops.log(self.scale)


class Uniform(Distribution):
    """torch.distributions.Uniform(low, high): [low, high)."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast(low, high)
        super().__init__(self.low.shape)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return ops.full_like(self.low, float("nan"))

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return ops.rand(*shape, dtype=self.low.dtype) * (self.high - self.low) + self.low

    def log_prob(self, value):
        value = _tensor(value)
        inside = ((self.low <= value) & (self.high > value)).astype(self.low.dtype)
        return ops.log(inside) - ops.log(self.high - self.low)

    def cdf(self, value):
        return ops.clamp((_tensor(value) - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        return _tensor(value) * (self.high - self.low) + self.low

    def entropy(self):
        return ops.log(self.high - self.low)


def _clamp_probs(probs):
    """torch's clamp_probs: into [eps, 1 - eps] (eps of the dtype) so that the logits stay finite."""
    eps = _limits.eps(probs.dtype)
    return ops.clamp(probs, eps, 1 - eps)


class Bernoulli(Distribution):
    """torch.distributions.Bernoulli(probs=None, logits=None)."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = _tensor(probs)
            clamped = _clamp_probs(self.probs)
            self.logits = ops.log(clamped) - ops.log1p(-clamped)
        else:
            self.logits = _tensor(logits)
            self.probs = ops.sigmoid(self.logits)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).astype(self.probs.dtype)
        return ops.where(self.probs == 0.5, ops.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return (ops.rand(*shape, dtype=self.probs.dtype) < ops.broadcast_to(self.probs, shape)).astype(self.probs.dtype)

    def log_prob(self, value):
        logits, value = _broadcast(self.logits, value)
        return -ops.binary_cross_entropy_with_logits(logits, value, ops.ones_like(logits), ops.ones_like(logits),
                                                     reduction="none")

    def entropy(self):
        return ops.binary_cross_entropy_with_logits(self.logits, self.probs, ops.ones_like(self.logits),
                                                    ops.ones_like(self.logits), reduction="none")


class Categorical(Distribution):
    """torch.distributions.Categorical(probs=None, logits=None): classes along the last dimension."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            probs = _tensor(probs)
            self.probs = probs / probs.sum(-1, keepdims=True)
            self.logits = ops.log(_clamp_probs(self.probs))
        else:
            logits = _tensor(logits)
            self.logits = logits - ops.logsumexp(logits, -1, True)
            self.probs = ops.softmax(self.logits, -1)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1])

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self):
        return ops.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1).astype(ms.int64)

    @property
    def variance(self):
        return ops.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        shape = _shape(sample_shape)
        n = 1
        for s in shape:
            n *= s
        flat = self.probs.reshape(-1, self._num_events)
        draws = ops.multinomial(flat, max(n, 1), replacement=True)  # (batch, n)
        draws = draws.T.reshape(shape + self._batch_shape) if n else ops.zeros(shape + self._batch_shape, ms.int64)
        return draws.astype(ms.int64)

    def log_prob(self, value):
        value = _tensor(value).astype(ms.int64)
        shape = tuple(np.broadcast_shapes(value.shape + (1,), self.logits.shape))
        index = ops.broadcast_to(value.reshape(value.shape + (1,)), shape[:-1] + (1,))
        log_pmf = ops.broadcast_to(self.logits, shape)
        return ops.gather_elements(log_pmf, -1, index).squeeze(-1)

    def entropy(self):
        logits = ops.clamp(self.logits, min=_limits.lowest(self.logits.dtype))  # -inf logits: 0 * -inf would be nan
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ops.arange(self._num_events, dtype=ms.int64).reshape((-1,) + (1,) * len(self._batch_shape))
        return ops.broadcast_to(values, (-1,) + self._batch_shape) if expand else values


class Laplace(Distribution):
    """torch.distributions.Laplace(loc, scale)."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale ** 2

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ops.rand(*shape, dtype=self.loc.dtype) * 2 - 1
        eps = _limits.eps(self.loc.dtype)
        u = ops.clamp(u, -1 + eps, 1)
        return self.loc - self.scale * ops.sign(u) * ops.log1p(-ops.abs(u))

    def log_prob(self, value):
        return -ops.log(2 * self.scale) - ops.abs(_tensor(value) - self.loc) / self.scale

    def cdf(self, value):
        value = _tensor(value)
        return 0.5 - 0.5 * ops.sign(value - self.loc) * ops.expm1(-ops.abs(value - self.loc) / self.scale)

    def entropy(self):
        return 1 + ops.log(2 * self.scale)


class Exponential(Distribution):
    """torch.distributions.Exponential(rate)."""

    has_rsample = True

    def __init__(self, rate, validate_args=None):
        self.rate = _tensor(rate)
        super().__init__(self.rate.shape)

    @property
    def mean(self):
        return 1 / self.rate

    @property
    def mode(self):
        return ops.zeros_like(self.rate)

    @property
    def stddev(self):
        return 1 / self.rate

    @property
    def variance(self):
        return self.rate ** -2

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return -ops.log1p(-ops.rand(*shape, dtype=self.rate.dtype)) / self.rate

    def log_prob(self, value):
        return ops.log(self.rate) - self.rate * _tensor(value)

    def cdf(self, value):
        return 1 - ops.exp(-self.rate * _tensor(value))

    def icdf(self, value):
        return -ops.log1p(-_tensor(value)) / self.rate

    def entropy(self):
        return 1.0 - ops.log(self.rate)


# ------------------------------------------------------------------------------------------------- transforms
# torch.distributions.transforms: invertible maps with torch's __call__, inv, log_abs_det_jacobian, forward_shape /
# inverse_shape, sign, bijective and the event dimensions of their domain and codomain (``domain.event_dim``). The
# constraints themselves are not modelled: ``domain``/``codomain`` carry only ``event_dim``. ``cache_size`` is accepted
# and ignored (torch's cache only saves recomputation).

class _Constraint:
    """The part of torch's constraint a transform's domain/codomain exposes here: its event_dim."""

    def __init__(self, event_dim=0):
        self.event_dim = event_dim

    def __repr__(self):
        return f"_Constraint(event_dim={self.event_dim})"


def _sum_rightmost(value, dim):
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1) if dim > 0 else value


def _finfo(dtype):
    """(tiny, eps) of ``dtype``, torch.finfo's (constants in a graph: runtime._float_limits)."""
    return _limits.tiny(dtype), _limits.eps(dtype)


def _pynative_only(name):
    """A transform whose methods don't compile (list slicing by a shape, per-slice loops): raise mindport's error
    when it is built for a graph (a class called in a graph runs through the JIT Fallback)."""
    _host_only(f"torch.distributions.{name} can't be used inside construct or @jit: build it "
               "and call it outside the graph")


def _clipped_sigmoid(x):
    tiny, eps = _finfo(x.dtype)
    return ops.clamp(ops.sigmoid(x), tiny, 1.0 - eps)


def _softplus(x):
    return ops.where(x > 20, x, ops.log1p(ops.exp(ops.minimum(x, 20))))  # torch's F.softplus (beta 1, threshold 20)


class Transform:
    """torch.distributions.Transform: the base (subclasses define _call, _inverse, log_abs_det_jacobian)."""

    bijective = False
    sign = 1
    _domain_event_dim = 0
    _codomain_event_dim = 0

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv = None

    @property
    def domain(self):
        return _Constraint(self._domain_event_dim)

    @property
    def codomain(self):
        return _Constraint(self._codomain_event_dim)

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    def with_cache(self, cache_size=1):
        return self

    def __call__(self, x):
        return self._call(x)

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """transform.inv: the same map the other way round."""

    def __init__(self, transform):
        super().__init__()
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __call__(self, x):
        return self._inv._inverse(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__


class ExpTransform(Transform):
    """y = exp(x)."""

    bijective = True

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return ops.exp(x)

    def _inverse(self, y):
        return ops.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class AbsTransform(Transform):
    """y = |x| (not bijective: its inverse gives y back)."""

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return ops.abs(x)

    def _inverse(self, y):
        return y


class SigmoidTransform(Transform):
    """y = sigmoid(x), clipped into [tiny, 1 - eps] of the dtype as torch does."""

    bijective = True

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        tiny, eps = _finfo(y.dtype)
        y = ops.clamp(y, tiny, 1.0 - eps)
        return ops.log(y) - ops.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


class TanhTransform(Transform):
    """y = tanh(x)."""

    bijective = True

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return ops.tanh(x)

    def _inverse(self, y):
        return ops.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    bijective = True

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return ops.log(-ops.expm1(-y)) + y

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


def _shape_of(value):
    return tuple(value.shape) if isinstance(value, Tensor) else ()


def _broadcast_shapes(*shapes):
    """torch.broadcast_shapes: a RuntimeError (not numpy's ValueError) when they don't broadcast."""
    rank = 0
    for shape in shapes:
        rank = max(rank, len(shape))
    out = [1] * rank
    for shape in shapes:
        for i, d in enumerate(shape):
            j = rank - len(shape) + i
            if d != 1 and out[j] != 1 and out[j] != d:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: {shapes}")
            if d != 1:
                out[j] = d
    return tuple(out)


class AffineTransform(Transform):
    """y = loc + scale * x (event_dim rightmost dimensions summed in log_abs_det_jacobian)."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def _domain_event_dim(self):
        return self._event_dim

    @property
    def _codomain_event_dim(self):
        return self._event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def sign(self):
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return ops.sign(self.scale)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, (int, float)):
            result = ops.full_like(x, math.log(abs(self.scale)))
        else:
            result = ops.log(ops.abs(self.scale))
        if self._event_dim:
            result = result.reshape(tuple(result.shape)[:-self._event_dim] + (-1,)).sum(-1)
            shape = shape[:-self._event_dim]
        return ops.broadcast_to(result, shape)

    def forward_shape(self, shape):
        return _broadcast_shapes(shape, _shape_of(self.loc), _shape_of(self.scale))

    def inverse_shape(self, shape):
        return _broadcast_shapes(shape, _shape_of(self.loc), _shape_of(self.scale))


class PowerTransform(Transform):
    """y = x ** exponent."""

    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size)
        self.exponent = exponent

    @property
    def sign(self):
        return ops.sign(self.exponent) if isinstance(self.exponent, Tensor) else (1 if self.exponent > 0 else -1)

    def _call(self, x):
        return ops.pow(x, self.exponent)

    def _inverse(self, y):
        return ops.pow(y, 1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return ops.log(ops.abs(self.exponent * y / x))

    def forward_shape(self, shape):
        return _broadcast_shapes(shape, _shape_of(self.exponent))

    def inverse_shape(self, shape):
        return _broadcast_shapes(shape, _shape_of(self.exponent))


class SoftmaxTransform(Transform):
    """y = softmax over the last dimension (exp(x - max) normalised; not bijective: the inverse is log y)."""

    _domain_event_dim = 1
    _codomain_event_dim = 1

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = ops.exp(x - x.max(-1, keepdims=True))
        return probs / probs.sum(-1, keepdims=True)

    def _inverse(self, y):
        return ops.log(y)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """Unconstrained vectors of length K-1 onto the K-simplex by stick breaking (torch's formulas)."""

    bijective = True
    _domain_event_dim = 1
    _codomain_event_dim = 1

    def __init__(self, cache_size=0):
        _pynative_only("StickBreakingTransform")
        super().__init__(cache_size)

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        offset = x.shape[-1] + 1 - ops.cumsum(ops.ones(x.shape[-1], x.dtype), -1)
        z = _clipped_sigmoid(x - ops.log(offset))
        z_cumprod = ops.cumprod(1 - z, -1)
        return ops.pad(z, (0, 1), value=1.0) * ops.pad(z_cumprod, (1, 0), value=1.0)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - ops.cumsum(ops.ones(y_crop.shape[-1], y.dtype), -1)
        sf = ops.clamp(1 - ops.cumsum(y_crop, -1), min=_finfo(y.dtype)[0])
        return ops.log(y_crop) - ops.log(sf) + ops.log(offset)

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - ops.cumsum(ops.ones(x.shape[-1], x.dtype), -1)
        x = x - ops.log(offset)
        return (-x + ops.log(ops.sigmoid(x)) + ops.log(y[..., :-1])).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)  # a list raises TypeError, as in torch

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)


class ReshapeTransform(Transform):
    """The rightmost dimensions in_shape reshaped to out_shape (same number of elements)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = tuple(int(s) for s in in_shape), tuple(int(s) for s in out_shape)
        if int(np.prod(self.in_shape)) != int(np.prod(self.out_shape)):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size)

    @property
    def _domain_event_dim(self):
        return len(self.in_shape)

    @property
    def _codomain_event_dim(self):
        return len(self.out_shape)

    def _call(self, x):
        batch_shape = tuple(x.shape)[:x.ndim - len(self.in_shape)]
        return x.reshape(batch_shape + self.out_shape)

    def _inverse(self, y):
        batch_shape = tuple(y.shape)[:y.ndim - len(self.out_shape)]
        return y.reshape(batch_shape + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape)[:x.ndim - len(self.in_shape)]
        return ops.zeros(batch_shape, x.dtype)

    def forward_shape(self, shape):
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if shape[cut:] != self.in_shape:  # a list never equals: ValueError, as in torch
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {self.in_shape}")
        return shape[:cut] + self.out_shape  # a list raises TypeError, as in torch

    def inverse_shape(self, shape):
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if shape[cut:] != self.out_shape:
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {self.out_shape}")
        return shape[:cut] + self.in_shape


class IndependentTransform(Transform):
    """base_transform with reinterpreted_batch_ndims more rightmost dimensions counted as the event."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size)
        self.base_transform, self.reinterpreted_batch_ndims = base_transform, reinterpreted_batch_ndims

    @property
    def domain(self):
        return _Constraint(self.base_transform.domain.event_dim + self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return _Constraint(self.base_transform.codomain.event_dim + self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ComposeTransform(Transform):
    """parts applied in order (an empty list is the identity)."""

    def __init__(self, parts, cache_size=0):
        _pynative_only("ComposeTransform")
        super().__init__(cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return _Constraint(0)
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim - part.codomain.event_dim + part.domain.event_dim, part.domain.event_dim)
        return _Constraint(max(event_dim, self.parts[0].domain.event_dim))

    @property
    def codomain(self):
        if not self.parts:
            return _Constraint(0)
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim - part.domain.event_dim + part.codomain.event_dim, part.codomain.event_dim)
        return _Constraint(max(event_dim, self.parts[-1].codomain.event_dim))

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return ops.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms, event_dim = [], self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape


class CatTransform(Transform):
    """tseq[i] applied to the i-th slice (lengths[i] long) of dimension dim, the results concatenated."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths and tseq have different sizes")
        self.dim = dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def _pieces(self, x):
        dim = self.dim % x.ndim
        start, pieces = 0, []
        for length in self.lengths:
            pieces.append(ops.narrow(x, dim, start, length))
            start += length
        return dim, pieces

    def _call(self, x):
        dim, pieces = self._pieces(x)
        return ops.cat([t(p) for t, p in zip(self.transforms, pieces)], dim)

    def _inverse(self, y):
        dim, pieces = self._pieces(y)
        return ops.cat([t.inv(p) for t, p in zip(self.transforms, pieces)], dim)

    def log_abs_det_jacobian(self, x, y):
        dim, xs = self._pieces(x)
        _, ys = self._pieces(y)
        return ops.cat([t.log_abs_det_jacobian(a, b) for t, a, b in zip(self.transforms, xs, ys)], dim)


class StackTransform(Transform):
    """tseq[i] applied to the i-th slice of dimension dim, the results stacked."""

    def __init__(self, tseq, dim=0, cache_size=0):
        _pynative_only("StackTransform")
        super().__init__(cache_size)
        self.transforms, self.dim = list(tseq), dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def _slices(self, x):
        return [ops.narrow(x, self.dim, i, 1).squeeze(self.dim) for i in range(x.shape[self.dim])]

    def _call(self, x):
        return ops.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return ops.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return ops.stack([t.log_abs_det_jacobian(a, b)
                          for t, a, b in zip(self.transforms, self._slices(x), self._slices(y))], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x); the inverse is its icdf and log_abs_det_jacobian its log_prob."""

    bijective = True
    sign = 1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size)
        self.distribution = distribution

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


# ------------------------------------------------------------------------------------- more distributions

class ExponentialFamily(Distribution):
    """torch.distributions.ExponentialFamily: the base of exponential-family distributions (shapes only here)."""


class TransformedDistribution(Distribution):
    """torch.distributions.TransformedDistribution(base_distribution, transforms): samples of the base pushed through
    the transforms; log_prob pulls a value back, adding each transform's log_abs_det_jacobian (torch's bookkeeping of
    event dimensions)."""

    def __init__(self, base_distribution, transforms, validate_args=None):
        self.base_dist = base_distribution
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(self.base_dist.batch_shape) + tuple(self.base_dist.event_shape)
        base_event_dim = len(self.base_dist.event_shape)
        domain_event_dim = _compose_domain_event_dim(self.transforms)
        codomain_event_dim = _compose_codomain_event_dim(self.transforms)
        if len(base_shape) < domain_event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {domain_event_dim}, but got "
                             f"{base_shape}.")
        shape = base_shape
        for t in self.transforms:
            shape = tuple(t.forward_shape(shape))
        event_dim = codomain_event_dim + max(base_event_dim - domain_event_dim, 0)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:])

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def sample(self, sample_shape=()):
        x = self.base_dist.sample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return ops.stop_gradient(x)

    def log_prob(self, value):
        value = _tensor(value)
        event_dim = len(self.event_shape)
        log_prob, y = 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def cdf(self, value):
        value = _tensor(value)
        for t in reversed(self.transforms):
            value = t.inv(value)
        value = self.base_dist.cdf(value)
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        return value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5

    def icdf(self, value):
        value = _tensor(value)
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        value = value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value


def _compose_domain_event_dim(transforms):
    if not transforms:
        return 0
    event_dim = transforms[-1].codomain.event_dim
    for t in reversed(transforms):
        event_dim = max(event_dim - t.codomain.event_dim + t.domain.event_dim, t.domain.event_dim)
    return max(event_dim, transforms[0].domain.event_dim)


def _compose_codomain_event_dim(transforms):
    if not transforms:
        return 0
    event_dim = transforms[0].domain.event_dim
    for t in transforms:
        event_dim = max(event_dim - t.domain.event_dim + t.codomain.event_dim, t.codomain.event_dim)
    return max(event_dim, transforms[-1].codomain.event_dim)


class Independent(Distribution):
    """torch.distributions.Independent(base_distribution, reinterpreted_batch_ndims): the rightmost batch dimensions
    counted as the event (log_prob and entropy summed over them)."""

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, reinterpreted_batch_ndims
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:])

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)


class LogNormal(TransformedDistribution):
    """torch.distributions.LogNormal(loc, scale): exp of Normal(loc, scale)."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale), ExpTransform())

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return ops.exp(self.loc + self.scale ** 2 / 2)

    @property
    def mode(self):
        return ops.exp(self.loc - self.scale ** 2)

    @property
    def variance(self):
        scale_sq = self.scale ** 2
        return ops.expm1(scale_sq) * ops.exp(2 * self.loc + scale_sq)

    def entropy(self):
        return self.base_dist.entropy() + self.loc


_EULER = 0.57721566490153286060


def _uniform_open(shape, dtype):
    """Uniform draws in [tiny, 1 - eps]: logs of them stay finite (torch clamps the same way)."""
    tiny, eps = _finfo(dtype)
    return ops.clamp(ops.rand(*shape, dtype=dtype), tiny, 1 - eps)


class Gumbel(Distribution):
    """torch.distributions.Gumbel(loc, scale)."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev ** 2

    def rsample(self, sample_shape=()):
        u = _uniform_open(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc - self.scale * ops.log(-ops.log(u))

    def log_prob(self, value):
        z = (self.loc - _tensor(value)) / self.scale
        return (z - ops.exp(z)) - ops.log(self.scale)

    def cdf(self, value):
        return ops.exp(-ops.exp(-(_tensor(value) - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * ops.log(-ops.log(_tensor(value)))

    def entropy(self):
        return ops.log(self.scale) + (1 + _EULER)


class Cauchy(Distribution):
    """torch.distributions.Cauchy(loc, scale): mean nan, variance inf, as torch."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return ops.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return ops.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        u = ops.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + self.scale * ops.tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        z = (_tensor(value) - self.loc) / self.scale
        return -math.log(math.pi) - ops.log(self.scale) - ops.log1p(z ** 2)

    def cdf(self, value):
        return ops.atan((_tensor(value) - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ops.tan(math.pi * (_tensor(value) - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + ops.log(self.scale)


class Geometric(Distribution):
    """torch.distributions.Geometric(probs=None, logits=None): failures before the first success (0, 1, ...)."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = _tensor(probs)
            clamped = _clamp_probs(self.probs)
            self.logits = ops.log(clamped) - ops.log1p(-clamped)
        else:
            self.logits = _tensor(logits)
            self.probs = ops.sigmoid(self.logits)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ops.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        tiny = _finfo(self.probs.dtype)[0]
        u = ops.clamp(ops.rand(*self._extended_shape(sample_shape), dtype=self.probs.dtype), min=tiny)
        return ops.floor(ops.log(u) / ops.log1p(-self.probs))

    def log_prob(self, value):
        value, probs = _broadcast(value, self.probs)
        probs = ops.where((probs == 1) & (value == 0), ops.zeros_like(probs), probs)
        return value * ops.log1p(-probs) + ops.log(self.probs)

    def entropy(self):
        return ops.binary_cross_entropy_with_logits(self.logits, self.probs, ops.ones_like(self.logits),
                                                    ops.ones_like(self.logits), reduction="none") / self.probs


# Draws that MindSpore 2.10 has no CPU kernel for in a non-deprecated op (gamma, Poisson, binomial, multinomial
# counts) come from NumPy's global generator (which mindspore.set_seed seeds): values are random draws, torch's law.

def _numpy_draw(name, draw, dtype):
    _host_only(f"{name}.sample draws with NumPy and can't run inside construct or @jit: "
               "sample outside the graph")
    return Tensor(np.asarray(draw), dtype)


def _standard_gamma(concentration, shape):
    alpha = np.broadcast_to(concentration.asnumpy(), shape)
    draws = np.asarray(np.random.standard_gamma(alpha)).astype(concentration.asnumpy().dtype)
    tiny = _finfo(concentration.dtype)[0]
    return _numpy_draw("Gamma", np.maximum(draws, tiny), concentration.dtype)


def _lbeta_dirichlet(concentration):
    return ops.lgamma(concentration).sum(-1) - ops.lgamma(concentration.sum(-1))


class Gamma(ExponentialFamily):
    """torch.distributions.Gamma(concentration, rate)."""

    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        _pynative_only("Gamma")  # samples are NumPy draws
        self.concentration, self.rate = _broadcast(concentration, rate)
        super().__init__(self.concentration.shape)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ops.clamp((self.concentration - 1) / self.rate, min=0)

    @property
    def variance(self):
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape=()):
        return _standard_gamma(self.concentration, self._extended_shape(sample_shape)) / self.rate

    def log_prob(self, value):
        value = _tensor(value)
        return (ops.xlogy(self.concentration, self.rate) + ops.xlogy(self.concentration - 1, value)
                - self.rate * value - ops.lgamma(self.concentration))

    def cdf(self, value):
        return ops.igamma(self.concentration, self.rate * _tensor(value))

    def entropy(self):
        c = self.concentration
        return c - ops.log(self.rate) + ops.lgamma(c) + (1.0 - c) * ops.digamma(c)


class Chi2(Gamma):
    """torch.distributions.Chi2(df): Gamma(df / 2, 1 / 2)."""

    def __init__(self, df, validate_args=None):
        _pynative_only("Chi2")  # samples are NumPy draws
        df = _tensor(df)
        super().__init__(0.5 * df, ops.full_like(df, 0.5))

    @property
    def df(self):
        return self.concentration * 2


class Dirichlet(ExponentialFamily):
    """torch.distributions.Dirichlet(concentration): the event is the last dimension."""

    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        _pynative_only("Dirichlet")  # samples are NumPy draws
        self.concentration = _tensor(concentration)
        if self.concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        super().__init__(self.concentration.shape[:-1], self.concentration.shape[-1:])

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdims=True)

    @property
    def mode(self):
        c = ops.clamp(self.concentration - 1, min=0.0)
        mode = c / c.sum(-1, keepdims=True)
        # all concentrations < 1: torch one-hots the argmax of that row of mode, all 0/0 = nan, which is index 0
        first = (ops.arange(c.shape[-1]) == 0).astype(mode.dtype)
        return ops.where((self.concentration < 1).all(-1, keep_dims=True), ops.broadcast_to(first, mode.shape), mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdims=True)
        return self.concentration * (total - self.concentration) / (total ** 2 * (total + 1))

    def rsample(self, sample_shape=()):
        draws = _standard_gamma(self.concentration, self._extended_shape(sample_shape))
        return draws / draws.sum(-1, keepdims=True)

    def log_prob(self, value):
        value = _tensor(value)
        return ops.xlogy(self.concentration - 1.0, value).sum(-1) - _lbeta_dirichlet(self.concentration)

    def entropy(self):
        k = self.concentration.shape[-1]
        total = self.concentration.sum(-1)
        return (ops.lgamma(self.concentration).sum(-1) - ops.lgamma(total) - (k - total) * ops.digamma(total)
                - ((self.concentration - 1.0) * ops.digamma(self.concentration)).sum(-1))


class Beta(ExponentialFamily):
    """torch.distributions.Beta(concentration1, concentration0): a Dirichlet over (x, 1 - x)."""

    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        _pynative_only("Beta")  # samples are NumPy draws
        c1, c0 = _broadcast(concentration1, concentration0)
        self._dirichlet = Dirichlet(ops.stack((c1, c0), -1))
        super().__init__(self._dirichlet.batch_shape)

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        value = _tensor(value)
        return self._dirichlet.log_prob(ops.stack((value, 1.0 - value), -1))

    def entropy(self):
        return self._dirichlet.entropy()


class StudentT(Distribution):
    """torch.distributions.StudentT(df, loc=0.0, scale=1.0)."""

    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        _pynative_only("StudentT")  # samples are NumPy draws
        self.df, self.loc, self.scale = _broadcast(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape)

    @property
    def mean(self):
        return ops.where(self.df > 1, self.loc, ops.full_like(self.loc, float("nan")))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        var = self.scale ** 2 * self.df / (self.df - 2)
        var = ops.where(self.df > 2, var, ops.full_like(var, float("inf")))
        return ops.where(self.df <= 1, ops.full_like(var, float("nan")), var)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = ops.standard_normal(shape).astype(self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * ops.rsqrt(z / self.df)

    def log_prob(self, value):
        y = (_tensor(value) - self.loc) / self.scale
        z = (ops.log(self.scale) + 0.5 * ops.log(self.df) + 0.5 * math.log(math.pi) + ops.lgamma(0.5 * self.df)
             - ops.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ops.log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = ops.lgamma(0.5 * self.df) + math.lgamma(0.5) - ops.lgamma(0.5 * (self.df + 1))
        return (ops.log(self.scale) + 0.5 * (self.df + 1) * (ops.digamma(0.5 * (self.df + 1))
                                                            - ops.digamma(0.5 * self.df))
                + 0.5 * ops.log(self.df) + lbeta)


class Poisson(ExponentialFamily):
    """torch.distributions.Poisson(rate): counts as floats of rate's dtype."""

    def __init__(self, rate, validate_args=None):
        _pynative_only("Poisson")  # samples are NumPy draws
        self.rate = _tensor(rate)
        super().__init__(self.rate.shape)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return ops.floor(self.rate)

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        draws = np.asarray(np.random.poisson(np.broadcast_to(self.rate.asnumpy(), shape))).astype(self.rate.asnumpy().dtype)
        return _numpy_draw("Poisson", draws, self.rate.dtype)

    def log_prob(self, value):
        value = _tensor(value)
        return ops.xlogy(value, self.rate) - self.rate - ops.lgamma(value + 1)


def _probs_logits_binary(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        probs = _tensor(probs)
        clamped = _clamp_probs(probs)
        return probs, ops.log(clamped) - ops.log1p(-clamped)
    logits = _tensor(logits)
    return ops.sigmoid(logits), logits


class Binomial(Distribution):
    """torch.distributions.Binomial(total_count=1, probs=None, logits=None): success counts as floats."""

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _pynative_only("Binomial")  # samples are NumPy draws
        probs, logits = _probs_logits_binary(probs, logits)
        self.total_count, self.probs, self.logits = _broadcast(total_count, probs, logits)
        self.total_count = self.total_count.astype(self.probs.dtype)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ops.minimum(ops.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n = np.broadcast_to(self.total_count.asnumpy(), shape).astype(np.int64)
        p = np.clip(np.broadcast_to(self.probs.asnumpy(), shape), 0.0, 1.0)
        return _numpy_draw("Binomial", np.asarray(np.random.binomial(n, p)).astype(self.probs.asnumpy().dtype), self.probs.dtype)

    def log_prob(self, value):
        value = _tensor(value)
        n, logits = self.total_count, self.logits
        clamp_by_zero = (ops.clamp(logits, min=0) + logits - ops.clamp(logits, max=0)) / 2
        normalize = n * clamp_by_zero + n * ops.log1p(ops.exp(-ops.abs(logits))) - ops.lgamma(n + 1)
        return value * logits - ops.lgamma(value + 1) - ops.lgamma(n - value + 1) - normalize


class _OverCategorical(Distribution):
    """A distribution over a Categorical's classes: its probs, logits, param_shape (properties, so a subclass reads
    them through super() as in torch)."""

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape


class Multinomial(_OverCategorical):
    """torch.distributions.Multinomial(total_count=1, probs=None, logits=None): counts over the last dimension."""

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _pynative_only("Multinomial")  # samples are NumPy draws
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:])

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = self.probs.asnumpy().astype(np.float64)
        probs = np.broadcast_to(probs / probs.sum(-1, keepdims=True), shape).reshape(-1, shape[-1])
        counts = np.stack([np.random.multinomial(self.total_count, p) for p in probs]) if probs.size else \
            np.zeros((0, shape[-1]))
        return _numpy_draw("Multinomial", counts.reshape(shape).astype(self.probs.asnumpy().dtype), self.probs.dtype)

    def log_prob(self, value):
        value = _tensor(value)
        logits, value = _broadcast(self.logits, value)
        logits = ops.where((value == 0) & ops.isinf(logits), ops.zeros_like(logits), logits)
        return (math.lgamma(self.total_count + 1) - ops.lgamma(value + 1).sum(-1)) + (value * logits).sum(-1)


class _Gaussian(Distribution):
    """A multivariate normal given a lower-triangular factor of its covariance (``_tril()``): mean, mode, precision
    matrix, log_prob, entropy."""

    has_rsample = True

    @property
    def precision_matrix(self):
        return ops.inverse(self.covariance_matrix)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    def _half_log_det(self):
        return ops.log(ops.diagonal(self._tril(), 0, -2, -1)).sum(-1)

    def log_prob(self, value):
        diff = _tensor(value) - self.loc
        tril = ops.broadcast_to(self._tril(), tuple(diff.shape[:-1]) + self._event_shape * 2)
        solved = ops.matmul(ops.inverse(tril), diff.expand_dims(-1))
        mahalanobis = (solved.squeeze(-1) ** 2).sum(-1)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + mahalanobis) - self._half_log_det()

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if not self._batch_shape else ops.broadcast_to(h, self._batch_shape)


class MultivariateNormal(_Gaussian):
    """torch.distributions.MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)."""

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        loc = _tensor(loc)
        if scale_tril is not None:
            tril = _tensor(scale_tril)
        elif covariance_matrix is not None:
            tril = ops.cholesky(_tensor(covariance_matrix))
        else:
            tril = ops.cholesky(ops.inverse(_tensor(precision_matrix)))
        batch = tuple(np.broadcast_shapes(tuple(tril.shape[:-2]), tuple(loc.shape[:-1])))
        self.loc = ops.broadcast_to(loc, batch + tuple(loc.shape[-1:]))
        self._unbroadcasted_scale_tril = tril
        super().__init__(batch, tuple(loc.shape[-1:]))

    @property
    def scale_tril(self):
        return ops.broadcast_to(self._unbroadcasted_scale_tril, self._batch_shape + self._event_shape * 2)

    @property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return ops.broadcast_to(ops.matmul(tril, tril.swapaxes(-1, -2)), self._batch_shape + self._event_shape * 2)


    @property
    def variance(self):
        return ops.broadcast_to((self._unbroadcasted_scale_tril ** 2).sum(-1), self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ops.standard_normal(shape).astype(self.loc.dtype)
        return self.loc + ops.matmul(self._unbroadcasted_scale_tril, eps.expand_dims(-1)).squeeze(-1)

    def _tril(self):
        return self._unbroadcasted_scale_tril


# ------------------------------------------------------------- one-hot, relaxed, half, mixture and other families

def _one_hot(indices, num_classes, dtype):
    eye = ops.eye(num_classes, num_classes, dtype)
    return ops.gather(eye, indices.astype(ms.int32).reshape(-1), 0).reshape(tuple(indices.shape) + (num_classes,))


class OneHotCategorical(_OverCategorical):
    """torch.distributions.OneHotCategorical(probs=None, logits=None): a Categorical whose values are one-hot vectors
    along the last dimension (the event)."""

    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs=probs, logits=logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:])

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        probs = self.probs
        return _one_hot(probs.argmax(-1), probs.shape[-1], probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        probs = self.probs
        return _one_hot(self._categorical.sample(sample_shape), probs.shape[-1], probs.dtype)

    def log_prob(self, value):
        return self._categorical.log_prob(_tensor(value).argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        values = ops.eye(n, n, self.probs.dtype).reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return ops.broadcast_to(values, (n,) + self._batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """torch.distributions.OneHotCategoricalStraightThrough: rsample is a one-hot draw whose gradient is that of the
    probabilities (draw + probs - stop_gradient(probs))."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        draws = self.sample(sample_shape)
        probs = self.probs
        return draws + (probs - ops.stop_gradient(probs))


def _temperature(temperature, like):
    temperature = _tensor(temperature)
    return temperature if temperature.dtype == like.dtype else temperature.astype(like.dtype)


class ExpRelaxedCategorical(_OverCategorical):
    """torch.distributions.ExpRelaxedCategorical(temperature, probs=None, logits=None): the log of a
    RelaxedOneHotCategorical draw (ExpConcrete): rsample is log_softmax((logits + Gumbel noise) / temperature)."""

    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs=probs, logits=logits)
        self.temperature = _temperature(temperature, self._categorical.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:])

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gumbels = -ops.log(-ops.log(_clamp_probs(ops.rand(*shape, dtype=self.logits.dtype))))
        scores = (self.logits + gumbels) / self.temperature
        return scores - ops.logsumexp(scores, -1, True)

    def log_prob(self, value):
        k = self._event_shape[0]
        value = _tensor(value)
        log_scale = math.lgamma(k) + (k - 1) * ops.log(self.temperature)
        score = self.logits - value * self.temperature
        return (score - ops.logsumexp(score, -1, True)).sum(-1) + log_scale


class _Relaxed(TransformedDistribution):
    """A relaxed (Concrete) distribution: its base's temperature, logits and probs."""

    has_rsample = True

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedOneHotCategorical(_Relaxed):
    """torch.distributions.RelaxedOneHotCategorical(temperature, probs=None, logits=None): the Concrete / Gumbel-softmax
    distribution on the simplex, exp of an ExpRelaxedCategorical."""

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits), ExpTransform())


class LogitRelaxedBernoulli(Distribution):
    """torch.distributions.LogitRelaxedBernoulli(temperature, probs=None, logits=None): the logit of a RelaxedBernoulli
    draw (a logistic law with location logits / temperature and scale 1 / temperature). It has rsample, yet
    has_rsample is False, as in torch."""

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _probs_logits_binary(probs, logits)
        self.temperature = _temperature(temperature, self.probs)
        super().__init__(self.probs.shape)

    @property
    def param_shape(self):
        return self.probs.shape

    def rsample(self, sample_shape=()):
        u = _clamp_probs(ops.rand(*self._extended_shape(sample_shape), dtype=self.probs.dtype))
        return (ops.log(u) - ops.log1p(-u) + self.logits) / self.temperature

    def log_prob(self, value):
        logits, value = _broadcast(self.logits, value)
        diff = logits - value * self.temperature
        return ops.log(self.temperature) + diff - 2 * _softplus(diff)


class RelaxedBernoulli(_Relaxed):
    """torch.distributions.RelaxedBernoulli(temperature, probs=None, logits=None): the binary Concrete distribution on
    (0, 1), sigmoid of a LogitRelaxedBernoulli."""

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform())


class _Folded(TransformedDistribution):
    """|X| for X symmetric about 0 (HalfNormal, HalfCauchy): density doubled on [0, inf), -inf below."""

    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    def log_prob(self, value):
        value = _tensor(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ops.where(value >= 0, log_prob, ops.full_like(log_prob, float("-inf")))

    def cdf(self, value):
        return 2 * self.base_dist.cdf(_tensor(value)) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((_tensor(prob) + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """torch.distributions.HalfNormal(scale): |Normal(0, scale)|."""

    def __init__(self, scale, validate_args=None):
        scale = _tensor(scale)
        super().__init__(Normal(ops.zeros_like(scale), scale), AbsTransform())

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return ops.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale ** 2 * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """torch.distributions.HalfCauchy(scale): |Cauchy(0, scale)| (mean and variance inf, as torch)."""

    def __init__(self, scale, validate_args=None):
        scale = _tensor(scale)
        super().__init__(Cauchy(ops.zeros_like(scale), scale), AbsTransform())

    @property
    def mean(self):
        return ops.full(self._extended_shape(), float("inf"), dtype=self.scale.dtype)

    @property
    def mode(self):
        return ops.zeros_like(self.scale)

    @property
    def variance(self):
        return ops.full(self._extended_shape(), float("inf"), dtype=self.scale.dtype)


class MixtureSameFamily(Distribution):
    """torch.distributions.MixtureSameFamily(mixture_distribution, component_distribution): a Categorical over the
    rightmost batch dimension of the components."""

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        self._mixture_distribution, self._component_distribution = mixture_distribution, component_distribution
        cdbs = tuple(component_distribution.batch_shape)
        mdbs = tuple(mixture_distribution.batch_shape)
        if not cdbs or len(cdbs) - 1 < len(mdbs) or any(
                m != c for m, c in zip(reversed(mdbs), reversed(cdbs[:-1])) if m != 1 and c != 1):
            raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                             f"`component_distribution.batch_shape`({cdbs})")
        k = mixture_distribution.param_shape[-1]
        if cdbs[-1] != k:
            raise ValueError(f"`mixture_distribution component` ({k}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({cdbs[-1]})")
        self._num_component = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs[:-1], component_distribution.event_shape)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        return x.expand_dims(-1 - self._event_ndims)

    def _pad_mixture(self, x):
        return x.reshape(tuple(x.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture(self._mixture_distribution.probs)
        axis = -1 - self._event_ndims
        within = (probs * self._component_distribution.variance).sum(axis)
        between = (probs * (self._component_distribution.mean - self._pad(self.mean)) ** 2).sum(axis)
        return within + between

    def cdf(self, x):
        cdf_x = self._component_distribution.cdf(self._pad(_tensor(x)))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        log_prob_x = self._component_distribution.log_prob(self._pad(_tensor(x)))
        log_mix = ops.log_softmax(self._mixture_distribution.logits, -1)
        return ops.logsumexp(log_prob_x + log_mix, -1)

    def sample(self, sample_shape=()):
        shape = _shape(sample_shape)
        picks = self._mixture_distribution.sample(shape)  # shape + batch
        draws = self._component_distribution.sample(shape)  # shape + batch + (k,) + event
        axis = len(shape) + len(self._batch_shape)
        index = picks.reshape(tuple(picks.shape) + (1,) * (1 + self._event_ndims))
        index = ops.broadcast_to(index, tuple(draws.shape[:axis]) + (1,) + tuple(draws.shape[axis + 1:]))
        return ops.stop_gradient(ops.gather_elements(draws, axis, index).squeeze(axis))


class LowRankMultivariateNormal(_Gaussian):
    """torch.distributions.LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W @ W.T + diag(D)."""

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        loc, cov_factor, cov_diag = _tensor(loc), _tensor(cov_factor), _tensor(cov_diag)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        n = loc.shape[-1]
        if cov_factor.shape[-2] != n or cov_diag.shape[-1] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m and cov_diag a batch of "
                             f"vectors with shape {n}")
        batch = tuple(np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                          tuple(cov_diag.shape[:-1])))
        self.loc = ops.broadcast_to(loc, batch + (n,))
        self.cov_factor = ops.broadcast_to(cov_factor, batch + tuple(cov_factor.shape[-2:]))
        self.cov_diag = ops.broadcast_to(cov_diag, batch + (n,))
        super().__init__(batch, (n,))

    @property
    def covariance_matrix(self):
        w = self.cov_factor
        return ops.matmul(w, w.swapaxes(-1, -2)) + ops.diag_embed(self.cov_diag)

    @property
    def scale_tril(self):
        return ops.cholesky(self.covariance_matrix)

    @property
    def variance(self):
        return (self.cov_factor ** 2).sum(-1) + self.cov_diag

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rank = self.cov_factor.shape[-1]
        eps_w = ops.standard_normal(shape[:-1] + (rank,)).astype(self.loc.dtype)
        eps_d = ops.standard_normal(shape).astype(self.loc.dtype)
        low_rank = ops.matmul(self.cov_factor, eps_w.expand_dims(-1)).squeeze(-1)
        return self.loc + low_rank + ops.sqrt(self.cov_diag) * eps_d

    def _tril(self):
        return self.scale_tril


class Weibull(TransformedDistribution):
    """torch.distributions.Weibull(scale, concentration): scale * E ** (1 / concentration), E ~ Exponential(1)."""

    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = _broadcast(scale, concentration)
        super().__init__(Exponential(ops.ones_like(self.scale)),
                         [PowerTransform(1 / self.concentration), AffineTransform(0, self.scale)])

    @property
    def mean(self):
        return self.scale * ops.exp(ops.lgamma(1 + 1 / self.concentration))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** (1 / k)

    @property
    def variance(self):
        k = self.concentration
        return self.scale ** 2 * (ops.exp(ops.lgamma(1 + 2 / k)) - ops.exp(2 * ops.lgamma(1 + 1 / k)))

    def entropy(self):
        k = self.concentration
        return _EULER * (1 - 1 / k) + ops.log(self.scale / k) + 1


class Pareto(TransformedDistribution):
    """torch.distributions.Pareto(scale, alpha): scale * exp(E), E ~ Exponential(alpha); mean inf for alpha <= 1 and
    variance inf for alpha <= 2, as torch."""

    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = _broadcast(scale, alpha)
        super().__init__(Exponential(self.alpha), [ExpTransform(), AffineTransform(0, self.scale)])

    @property
    def mean(self):
        a = ops.clamp(self.alpha, min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = ops.clamp(self.alpha, min=2)
        return self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2))

    def entropy(self):
        return ops.log(self.scale / self.alpha) + 1 / self.alpha + 1


class Kumaraswamy(TransformedDistribution):
    """torch.distributions.Kumaraswamy(concentration1, concentration0): (1 - U ** (1 / b)) ** (1 / a) on (0, 1)."""

    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _broadcast(concentration1, concentration0)
        a, b = self.concentration1, self.concentration0
        super().__init__(Uniform(ops.zeros_like(a), ops.ones_like(a)),
                         [PowerTransform(1 / b), AffineTransform(1.0, -1.0), PowerTransform(1 / a)])

    def _moment(self, n):
        a, b = self.concentration1, self.concentration0
        arg = 1 + n / a
        return b * ops.exp(ops.lgamma(arg) + ops.lgamma(b) - ops.lgamma(arg + b))

    @property
    def mean(self):
        return self._moment(1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)) ** (1 / a)
        return ops.where((a < 1) | (b < 1), ops.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self._moment(2) - self._moment(1) ** 2

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = ops.digamma(b + 1) + _EULER
        return (1 - 1 / b) + (1 - 1 / a) * harmonic_b - ops.log(a) - ops.log(b)


class InverseGamma(TransformedDistribution):
    """torch.distributions.InverseGamma(concentration, rate): 1 / Gamma(concentration, rate)."""

    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        _pynative_only("InverseGamma")  # samples are NumPy draws
        super().__init__(Gamma(concentration, rate), PowerTransform(-1.0))

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        c, r = self.concentration, self.rate
        return ops.where(c > 1, r / (c - 1), ops.full_like(r, float("inf")))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c, r = self.concentration, self.rate
        return ops.where(c > 2, r ** 2 / ((c - 1) ** 2 * (c - 2)), ops.full_like(r, float("inf")))

    def entropy(self):
        c = self.concentration
        return c + ops.log(self.rate) + ops.lgamma(c) - (1 + c) * ops.digamma(c)


class NegativeBinomial(Distribution):
    """torch.distributions.NegativeBinomial(total_count, probs=None, logits=None): successes (probability probs)
    before total_count failures, as floats."""

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _pynative_only("NegativeBinomial")  # samples are NumPy draws
        probs, logits = _probs_logits_binary(probs, logits)
        self.total_count, self.probs, self.logits = _broadcast(total_count, probs, logits)
        self.total_count = self.total_count.astype(self.probs.dtype)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return self.total_count * ops.exp(self.logits)

    @property
    def mode(self):
        return ops.clamp(ops.floor((self.total_count - 1) * ops.exp(self.logits)), min=0.0)

    @property
    def variance(self):
        return self.mean / ops.sigmoid(-self.logits)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n = np.broadcast_to(self.total_count.asnumpy(), shape).astype(np.float64)
        failure = np.clip(1.0 - np.broadcast_to(self.probs.asnumpy(), shape).astype(np.float64), 1e-300, 1.0)
        draws = np.asarray(np.random.negative_binomial(n, failure)).astype(self.probs.asnumpy().dtype)
        return _numpy_draw("NegativeBinomial", draws, self.probs.dtype)

    def log_prob(self, value):
        value = _tensor(value)
        r = self.total_count
        unnormalized = -r * _softplus(self.logits) - value * _softplus(-self.logits)  # log sigmoid(x) = -softplus(-x)
        normalization = -ops.lgamma(r + value) + ops.lgamma(1.0 + value) + ops.lgamma(r)
        normalization = ops.where(r + value == 0.0, ops.zeros_like(normalization), normalization)
        return unnormalized - normalization


class LogisticNormal(TransformedDistribution):
    """torch.distributions.LogisticNormal(loc, scale): stick-breaking of an Independent Normal (the event is the last
    dimension, one longer than loc's)."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        _pynative_only("LogisticNormal")  # StickBreakingTransform slices per stick
        base = Normal(loc, scale)
        if not base.batch_shape:
            base = Normal(base.loc.reshape(1), base.scale.reshape(1))
        super().__init__(Independent(base, 1), StickBreakingTransform())

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale


class GeneralizedPareto(Distribution):
    """torch.distributions.GeneralizedPareto(loc, scale, concentration): z = (x - loc) / scale has cdf
    1 - (1 + concentration z) ** (-1 / concentration) (1 - exp(-z) at concentration 0); mean nan for concentration
    >= 1, variance nan for concentration >= 1/2, as torch."""

    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = _broadcast(loc, scale, concentration)
        super().__init__(self.loc.shape)

    def _split(self):
        """(concentration is 0, a concentration safe to divide by)."""
        zero = self.concentration == 0
        return zero, ops.where(zero, ops.ones_like(self.concentration), self.concentration)

    @property
    def mean(self):
        c = self.concentration
        return ops.where(c < 1, self.loc + self.scale / (1 - c), ops.full_like(c, float("nan")))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        c = self.concentration
        var = self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c))
        return ops.where(c < 0.5, var, ops.full_like(c, float("nan")))

    def rsample(self, sample_shape=()):
        u = _uniform_open(self._extended_shape(sample_shape), self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        z = (_tensor(value) - self.loc) / self.scale
        zero, c = self._split()
        general = -(1 + 1 / c) * ops.log1p(c * z)
        return ops.where(zero, -z, general) - ops.log(self.scale)

    def cdf(self, value):
        z = (_tensor(value) - self.loc) / self.scale
        zero, c = self._split()
        return ops.where(zero, -ops.expm1(-z), 1 - ops.pow(1 + c * z, -1 / c))

    def icdf(self, value):
        value = _tensor(value)
        zero, c = self._split()
        z = ops.where(zero, -ops.log1p(-value), ops.expm1(-c * ops.log1p(-value)) / c)
        return self.loc + self.scale * z

    def entropy(self):
        return ops.log(self.scale) + self.concentration + 1


class ContinuousBernoulli(ExponentialFamily):
    """torch.distributions.ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501)): density
    C(p) p ** x (1 - p) ** (1 - x) on [0, 1], C(p) = 2 atanh(1 - 2p) / (1 - 2p); inside lims (near p = 1/2, where
    that form is 0/0) the normaliser, mean and variance are their Taylor expansions about 1/2."""

    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        self.probs, self.logits = _probs_logits_binary(probs, logits)
        self._lims = lims
        super().__init__(self.probs.shape)

    @property
    def param_shape(self):
        return self.probs.shape

    def _outside(self):
        """(outside lims, probs with the ones inside lims moved to lims[0]: safe in the closed forms)."""
        outside = (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])
        return outside, ops.where(outside, self.probs, ops.full_like(self.probs, self._lims[0]))

    def _log_normalizer(self):
        outside, p = self._outside()
        y = 1 - 2 * p
        closed = ops.log(ops.abs(2 * ops.atanh(y))) - ops.log(ops.abs(y))
        x2 = (self.probs - 0.5) ** 2
        return ops.where(outside, closed, math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x2) * x2)

    @property
    def mean(self):
        outside, p = self._outside()
        closed = p / (2 * p - 1) + 1 / (2 * ops.atanh(1 - 2 * p))
        x = self.probs - 0.5
        return ops.where(outside, closed, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x)

    @property
    def variance(self):
        outside, p = self._outside()
        closed = p * (p - 1) / (1 - 2 * p) ** 2 + 1 / (2 * ops.atanh(1 - 2 * p)) ** 2
        x2 = (self.probs - 0.5) ** 2
        return ops.where(outside, closed, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x2) * x2)

    def log_prob(self, value):
        logits, value = _broadcast(self.logits, value)
        return value * logits - _softplus(logits) + self._log_normalizer()  # log p ** x (1 - p) ** (1 - x)

    def cdf(self, value):
        value = _tensor(value)
        outside, p = self._outside()
        closed = (ops.pow(p, value) * ops.pow(1 - p, 1 - value) + p - 1) / (2 * p - 1)
        cdf = ops.where(outside, closed, ops.broadcast_to(value, closed.shape) if value.shape != closed.shape
                        else value)
        return ops.where(value <= 0, ops.zeros_like(cdf), ops.where(value >= 1, ops.ones_like(cdf), cdf))

    def icdf(self, value):
        value = _tensor(value)
        outside, p = self._outside()
        closed = ops.log1p(value * (2 * p - 1) / (1 - p)) / (ops.log(p) - ops.log1p(-p))
        return ops.where(outside, closed, value)

    def rsample(self, sample_shape=()):
        return self.icdf(ops.rand(*self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def entropy(self):
        log_p0, log_p1 = ops.log1p(-self.probs), ops.log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._log_normalizer() - log_p0


class FisherSnedecor(Distribution):
    """torch.distributions.FisherSnedecor(df1, df2): (Chi2(df1) / df1) / (Chi2(df2) / df2); mean, mode and variance
    nan where they do not exist, as torch."""

    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        _pynative_only("FisherSnedecor")  # samples are NumPy draws
        self.df1, self.df2 = _broadcast(df1, df2)
        super().__init__(self.df1.shape)

    @property
    def mean(self):
        d2 = self.df2
        return ops.where(d2 > 2, d2 / (d2 - 2), ops.full_like(d2, float("nan")))

    @property
    def mode(self):
        d1, d2 = self.df1, self.df2
        return ops.where(d1 > 2, (d1 - 2) / d1 * d2 / (d2 + 2), ops.full_like(d1, float("nan")))

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        var = 2 * d2 ** 2 * (d1 + d2 - 2) / (d1 * (d2 - 2) ** 2 * (d2 - 4))
        return ops.where(d2 > 4, var, ops.full_like(var, float("nan")))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x1 = _standard_gamma(0.5 * self.df1, shape) / (0.5 * self.df1)
        x2 = _standard_gamma(0.5 * self.df2, shape) / (0.5 * self.df2)
        tiny = _finfo(self.df1.dtype)[0]
        return ops.clamp(x1 / x2, min=tiny)

    def log_prob(self, value):
        value = _tensor(value)
        h1, h2 = 0.5 * self.df1, 0.5 * self.df2
        lbeta = ops.lgamma(h1) + ops.lgamma(h2) - ops.lgamma(h1 + h2)
        return (h1 * ops.log(self.df1) + h2 * ops.log(self.df2) + (h1 - 1) * ops.log(value)
                - (h1 + h2) * ops.log(self.df1 * value + self.df2) - lbeta)


# ------------------------------------------------------------------------------------------------------ kl

def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - ops.log(var_ratio))


def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = ops.lgamma(sum_p) - ops.lgamma(sum_q)
    t2 = (ops.lgamma(p.concentration) - ops.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = ops.digamma(p.concentration) - ops.digamma(sum_p).expand_dims(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


def _kl_gamma_gamma(p, q):
    t1 = q.concentration * ops.log(p.rate / q.rate)
    t2 = ops.lgamma(q.concentration) - ops.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ops.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (ops.softplus(-q.logits) - ops.softplus(-p.logits))
    t1 = ops.where(q.probs == 0, ops.full_like(t1, float("inf")), t1)
    t1 = ops.where(p.probs == 0, ops.zeros_like(t1), t1)
    t2 = (1 - p.probs) * (ops.softplus(q.logits) - ops.softplus(p.logits))
    t2 = ops.where(q.probs == 1, ops.full_like(t2, float("inf")), t2)
    t2 = ops.where(p.probs == 1, ops.zeros_like(t2), t2)
    return t1 + t2


def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = ops.where(q.probs == 0, ops.full_like(t, float("inf")), t)
    t = ops.where(p.probs == 0, ops.zeros_like(t), t)
    return t.sum(-1)


def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - ops.log(rate_ratio)


def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = ops.abs(p.loc - q.loc)
    t1 = -ops.log(scale_ratio)
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * ops.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _kl_uniform_uniform(p, q):
    result = ops.log((q.high - q.low) / (p.high - p.low))
    outside = (q.low > p.low) | (q.high < p.high)
    return ops.where(outside, ops.full_like(result, float("inf")), result)


def _kl_poisson_poisson(p, q):
    return p.rate * (ops.log(p.rate) - ops.log(q.rate)) - (p.rate - q.rate)


def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


def _kl_mvn_mvn(p, q):
    k = p.event_shape[0]
    q_inv = ops.inverse(q._unbroadcasted_scale_tril)
    term = ops.matmul(q_inv, p._unbroadcasted_scale_tril)
    diff = ops.matmul(q_inv, (q.loc - p.loc).expand_dims(-1)).squeeze(-1)
    return (q._half_log_det() - p._half_log_det()
            + 0.5 * ((term ** 2).sum((-2, -1)) + (diff ** 2).sum(-1) - k))


_KL = {}


def register_kl(type_p, type_q):
    """torch.distributions.kl.register_kl: a decorator registering fn(p, q) for that pair of classes."""
    _pynative_only("kl.register_kl")
    def decorator(fn):
        _KL[(type_p, type_q)] = fn
        return fn
    return decorator


for _p, _fn in ((Normal, _kl_normal_normal), (Dirichlet, _kl_dirichlet_dirichlet), (Beta, _kl_beta_beta),
                (Gamma, _kl_gamma_gamma), (Bernoulli, _kl_bernoulli_bernoulli),
                (Categorical, _kl_categorical_categorical), (Exponential, _kl_exponential_exponential),
                (Laplace, _kl_laplace_laplace), (Uniform, _kl_uniform_uniform), (Poisson, _kl_poisson_poisson),
                (MultivariateNormal, _kl_mvn_mvn), (OneHotCategorical, _kl_onehot_onehot),
                (Independent, _kl_independent_independent)):
    _KL[(_p, _p)] = _fn


def kl_divergence(p, q):
    """torch.distributions.kl.kl_divergence(p, q) for the registered pairs (the most derived match, as torch)."""
    _pynative_only("kl.kl_divergence")
    matches = [(tp, tq) for tp, tq in _KL if isinstance(p, tp) and isinstance(q, tq)]
    if not matches:
        raise NotImplementedError(f"No KL(p || q) is implemented for {type(p).__name__} and {type(q).__name__}")
    best = min(matches, key=lambda pair: (type(p).__mro__.index(pair[0]), type(q).__mro__.index(pair[1])))
    return _KL[best](p, q)
