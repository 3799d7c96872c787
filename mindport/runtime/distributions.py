"""torch.distributions' most used classes, on MindSpore tensors: Normal, Uniform, Bernoulli, Categorical, Laplace,
Exponential.

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


def _tensor(value):
    if isinstance(value, Tensor):
        return value if value.dtype in (ms.float16, ms.float32, ms.float64) else value.astype(ms.float32)
    return Tensor(value, ms.float32)


def _shape(sample_shape) -> tuple:
    if isinstance(sample_shape, int):
        return (sample_shape,)
    return tuple(int(s) for s in sample_shape)


def _broadcast(*values):
    tensors = [_tensor(v) for v in values]
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
        return self.loc + self.scale * ops.erfinv(2 * _tensor(value) - 1) * math.sqrt(2)

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
    eps = _EPS[probs.dtype]
    return ops.clamp(probs, eps, 1 - eps)


_EPS = {ms.float16: 0.0009765625, ms.float32: 1.1920928955078125e-07, ms.float64: 2.220446049250313e-16}


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
        logits = ops.clamp(self.logits, min=_FLOAT_MIN[self.logits.dtype])  # -inf logits: 0 * -inf would be nan
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ops.arange(self._num_events, dtype=ms.int64).reshape((-1,) + (1,) * len(self._batch_shape))
        return ops.broadcast_to(values, (-1,) + self._batch_shape) if expand else values


_FLOAT_MIN = {ms.float16: -65504.0, ms.float32: -3.4028234663852886e38, ms.float64: -1.7976931348623157e308}


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
        eps = _EPS[self.loc.dtype]
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
