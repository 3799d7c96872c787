"""One stream of random draws for both sides of a proof: a forward that draws (a VAE's ``torch.randn_like(std)``, noise
injection, dropout with ``training=True``, Gumbel-softmax, a multinomial sampler, ``torch.distributions`` samples) is
proven by giving the MindSpore port the very values the torch run drew.

During a proof run only, :func:`drawing` patches the random entry points of one framework (nothing in converted code
changes). Each draw is reduced to its *underlying* values, standard normal or uniform on [0, 1), and the transform
its API applies (``normal(mean, std)`` = mean + std * z, ``uniform_(a, b)`` = a + (b - a) * u, ``bernoulli(p)`` =
u < p, ``randint(lo, hi)`` = lo + floor(u * (hi - lo)), ``randperm(n)`` = the stable argsort of n uniforms, dropout's
keep mask = u >= p, an exponential = -log1p(-u) / rate, a multinomial by inverse CDF or by the Efraimidis-Spirakis keys
log(u) / w without replacement). The torch run draws those values from a numpy stream of a fixed seed (so every torch
forward on the same inputs draws the same, and the model is deterministic for the proof) and records them in order
(:class:`Draw`: API, family, underlying kind, shape, scalar parameters, values); the MindSpore run takes the recorded
draws in order instead of drawing. A MindSpore draw that MindSpore composes from another (``mindport.runtime``'s
``normal_`` from ``ops.randn``, its ``bernoulli`` from ``ops.rand``) replays the same underlying values.

Each MindSpore draw is checked against the recorded one: the same underlying kind and shape, the same family when
both are structural (dropout, integers, permutation, multinomial: a port that swaps them reads other values) and the
same scalar parameters (dropout's p: a ``keep_prob`` left where torch has ``p`` differs here). A mismatch, one draw
more than torch drew, or one fewer at the end, raises :class:`DrawsDiverged` ("the draw sequence diverged at draw k"):
the forward fails, never passes silently.

A draw with ``generator=`` is recorded like any other on the torch side and replayed where ``mindport.runtime`` draws
it from the generator's numpy stream (random, standard_normal, integers, permutation; its ``choice`` and ``poisson``
fail loudly). Not replayed (they keep drawing on their own, so such a forward stays "not deterministic"):
``alpha_dropout``, ``feature_alpha_dropout``, ``rrelu``, ``poisson``, ``svd_lowrank``/``pca_lowrank``, Python's
``random`` and numpy's global stream.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import numpy as np

SEED = 20260  # the torch side's stream: the same values for every forward of a proof

_INHERITED = object()
STRUCTURAL = {"dropout", "feature_dropout", "integers", "permutation", "multinomial"}


class DrawsDiverged(RuntimeError):
    """The port's draws do not follow torch's: which draw, and what each side drew."""


@dataclass
class Draw:
    api: str  # the entry point that drew ("torch.randn_like", "mindspore.ops.randn")
    family: str  # normal, uniform, bernoulli, dropout, feature_dropout, integers, permutation, multinomial, ...
    base: str  # the underlying values: "normal" (standard normal) or "uniform" (on [0, 1))
    shape: tuple
    params: dict = field(default_factory=dict)  # scalar parameters that must agree (dropout's p, randint's bounds)
    values: np.ndarray | None = None  # float64

    def describe(self) -> str:
        extra = "".join(f", {k}={v}" for k, v in self.params.items())
        return f"{self.api} ({self.family}, shape {tuple(self.shape)}{extra})"

    def as_dict(self) -> dict:
        return {"api": self.api, "family": self.family, "base": self.base, "shape": list(self.shape),
                "params": dict(self.params), "values": self.values}


class Stream:
    """Record (``tape`` None: values from a numpy stream of ``seed``) or replay ``tape`` (a list of Draw dicts)."""

    def __init__(self, tape: list | None = None, seed: int = SEED):
        self.replaying = tape is not None
        self.tape = [d if isinstance(d, Draw) else Draw(d["api"], d["family"], d["base"], tuple(d["shape"]),
                                                        dict(d["params"]), d["values"]) for d in (tape or [])]
        self.rng = np.random.default_rng(seed)
        self.position = 0
        self.depth = 0  # an entry point called from another one (a distribution's sample calling torch.normal)

    def take(self, api: str, family: str, base: str, shape, params: dict | None = None) -> np.ndarray:
        shape = tuple(int(n) for n in shape)
        want = Draw(api, family, base, shape, dict(params or {}))
        k = self.position
        self.position += 1
        if not self.replaying:
            want.values = (self.rng.standard_normal(shape) if base == "normal" else self.rng.random(shape))
            self.tape.append(want)
            return want.values
        if k >= len(self.tape):
            raise DrawsDiverged(f"the draw sequence diverged at draw {k + 1}: torch drew {len(self.tape)} "
                                f"time(s), the MindSpore port draws again with {want.describe()}")
        got = self.tape[k]
        if got.base != base or tuple(got.shape) != shape or (
                family in STRUCTURAL and got.family in STRUCTURAL and family != got.family) or any(
                k2 in got.params and not _same(got.params[k2], v) for k2, v in want.params.items()):
            raise DrawsDiverged(f"the draw sequence diverged at draw {k + 1} of {len(self.tape)}: torch drew "
                                f"{got.describe()}, the MindSpore port draws {want.describe()}")
        return np.asarray(got.values, dtype=np.float64)

    def finish(self) -> None:
        if self.replaying and self.position < len(self.tape):
            left = self.tape[self.position]
            raise DrawsDiverged(f"the draw sequence diverged at draw {self.position + 1} of {len(self.tape)}: the "
                                f"MindSpore port drew {self.position} time(s), torch drew next {left.describe()}")


def _same(a, b) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
    except (TypeError, ValueError):
        return a == b


@contextlib.contextmanager
def drawing(framework: str, tape: list | None = None, seed: int = SEED):
    """Patch ``framework``'s ("torch" or "mindspore") random entry points for the duration: record (``tape`` None)
    or replay ``tape``. Yields the :class:`Stream`; on a clean exit a replay that left draws unread raises."""
    stream = Stream(tape, seed)
    patches = _torch_patches(stream) if framework == "torch" else _ms_patches(stream)
    # a class's own attribute is put back; one it inherits (torch.Tensor's methods live on its C base) is deleted
    saved = [(owner, name, owner.__dict__.get(name, _INHERITED) if isinstance(owner, type) else getattr(owner, name))
             for owner, name, _ in patches]
    try:
        for owner, name, new in patches:
            setattr(owner, name, new)
        yield stream
    finally:
        for owner, name, old in saved:
            if old is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
    stream.finish()


def _entry(stream: Stream, original, handler):
    """The patched entry point: ``handler(*args, **kwargs)`` at the outermost call, the original when nested."""
    def patched(*args, **kwargs):
        if stream.depth:
            return original(*args, **kwargs)
        stream.depth += 1
        try:
            return handler(*args, **kwargs)
        finally:
            stream.depth -= 1
    patched.__wrapped__ = original
    return patched


def _size(args, kwargs) -> tuple:
    if "size" in kwargs:
        size = kwargs["size"]
    elif len(args) == 1 and not isinstance(args[0], int) and hasattr(args[0], "__len__"):
        size = args[0]
    else:
        size = args
    if isinstance(size, int):
        size = (size,)
    return tuple(int(n) for n in size)


def _multinomial(probs: np.ndarray, num_samples: int, replacement: bool, u: np.ndarray) -> np.ndarray:
    """Indices from the uniform draws ``u``: inverse CDF (with replacement, u of shape rows x num_samples) or the
    largest num_samples keys log(u) / w (without, u of shape rows x categories)."""
    rows = probs.reshape(-1, probs.shape[-1]).astype(np.float64)
    out = []
    for row, ur in zip(rows, u.reshape(rows.shape[0], -1)):
        if replacement:
            cdf = np.cumsum(row / row.sum())
            out.append(np.minimum(np.searchsorted(cdf, ur, side="right"), len(row) - 1))
        else:
            with np.errstate(divide="ignore"):
                keys = np.where(row > 0, np.log(ur) / np.where(row > 0, row, 1.0), -np.inf)
            out.append(np.argsort(-keys, kind="stable")[:num_samples])
    return np.stack(out).reshape(probs.shape[:-1] + (num_samples,)).astype(np.int64)


def _multinomial_shape(shape, num_samples, replacement) -> tuple:
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    return (rows, int(num_samples) if replacement else int(shape[-1]))


def _feature_shape(shape, batched_ndim: int) -> tuple:
    """Dropout1d/2d/3d's mask: one value per (sample, channel), per channel for an unbatched input."""
    lead = 2 if len(shape) == batched_ndim else 1
    return tuple(shape[:lead]) + (1,) * (len(shape) - lead)


# ----------------------------------------------------------------------------------------------------------- torch


def _torch_patches(stream: Stream) -> list:
    import torch
    import torch.nn.functional as F  # noqa: N812

    def t(values, dtype=None, like=None):
        dtype = dtype or (like.dtype if like is not None else torch.get_default_dtype())
        out = torch.from_numpy(np.ascontiguousarray(values))
        return out.to(dtype=dtype, device=like.device if like is not None else None)

    def floating(dtype, like=None):
        return dtype or (like.dtype if like is not None else torch.get_default_dtype())

    def randn(*args, dtype=None, **kw):
        return t(stream.take("torch.randn", "normal", "normal", _size(args, kw)), floating(dtype))

    def rand(*args, dtype=None, **kw):
        return t(stream.take("torch.rand", "uniform", "uniform", _size(args, kw)), floating(dtype))

    def randn_like(input, dtype=None, **kw):
        return t(stream.take("torch.randn_like", "normal", "normal", input.shape), floating(dtype, input))

    def rand_like(input, dtype=None, **kw):
        return t(stream.take("torch.rand_like", "uniform", "uniform", input.shape), floating(dtype, input))

    def _bounds(args, kw):
        args = list(args)
        if "high" in kw:
            low, high = kw.get("low", args.pop(0) if args and "low" not in kw else 0), kw["high"]
        elif len(args) >= 2 and isinstance(args[1], int):
            low, high = args.pop(0), args.pop(0)
        else:
            low, high = kw.get("low", 0), args.pop(0)
        return int(low), int(high), args

    def randint(*args, dtype=None, **kw):
        low, high, rest = _bounds(args, kw)
        u = stream.take("torch.randint", "integers", "uniform", _size(rest, kw), {"low": low, "high": high})
        return t(low + np.floor(u * (high - low)), dtype or torch.int64)

    def randint_like(input, *args, dtype=None, **kw):
        low, high, _ = _bounds(args, kw)
        u = stream.take("torch.randint_like", "integers", "uniform", input.shape, {"low": low, "high": high})
        return t(low + np.floor(u * (high - low)), dtype or input.dtype)

    def randperm(n, *, dtype=None, **kw):
        u = stream.take("torch.randperm", "permutation", "uniform", (int(n),))
        return t(np.argsort(u, kind="stable"), dtype or torch.int64)

    def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, **kw):
        shape = torch.broadcast_shapes(*[x.shape for x in (mean, std) if torch.is_tensor(x)]) if size is None \
            else tuple(size)
        like = next((x for x in (mean, std) if torch.is_tensor(x)), None)
        z = t(stream.take("torch.normal", "normal", "normal", shape), floating(dtype, like))
        return z * std + mean

    def bernoulli(input, p=None, **kw):
        u = stream.take("torch.bernoulli", "bernoulli", "uniform", input.shape)
        prob = input if p is None else p
        return (t(u, torch.float64) < (prob.double() if torch.is_tensor(prob) else prob)).to(input.dtype)

    def multinomial(input, num_samples, replacement=False, **kw):
        shape = _multinomial_shape(tuple(input.shape), num_samples, replacement)
        u = stream.take("torch.multinomial", "multinomial", "uniform", shape,
                        {"num_samples": int(num_samples), "replacement": bool(replacement)})
        probs = input.detach().double().cpu().numpy()
        return torch.from_numpy(_multinomial(probs, int(num_samples), bool(replacement), u))

    def fill(name, family, base, transform):
        def method(self, *args, **kw):
            values = stream.take(f"torch.Tensor.{name}", family, base, self.shape)
            with torch.no_grad():
                self.copy_(transform(t(values, torch.float64), *args, **kw).to(self.dtype))
            return self
        return method

    def uniform_t(u, a=0.0, b=1.0, **kw):  # torch's keywords are from (only through **kwargs) and to
        a, b = kw.get("from", a), kw.get("to", b)
        return a + (b - a) * u

    def normal_t(z, mean=0.0, std=1.0, **kw):
        return mean + std * z

    def log_normal_t(z, mean=1.0, std=2.0, **kw):
        return torch.exp(mean + std * z)

    def exponential_t(u, lambd=1.0, **kw):
        return -torch.log1p(-u) / lambd

    def cauchy_t(u, median=0.0, sigma=1.0, **kw):
        return median + sigma * torch.tan(math.pi * (u - 0.5))

    def geometric_t(u, p, **kw):
        return torch.floor(torch.log1p(-u) / math.log1p(-p)) + 1

    def bernoulli_t(u, p=0.5, **kw):
        return (u < (p.double() if torch.is_tensor(p) else p)).double()

    def random_(self, *args, **kw):
        args = list(args) + [kw[k] for k in ("from", "to") if k in kw]
        low, high = (0, args[0]) if len(args) == 1 else (args[0], args[1])
        u = stream.take("torch.Tensor.random_", "integers", "uniform", self.shape, {"low": low, "high": high})
        with torch.no_grad():
            self.copy_(t(low + np.floor(u * (high - low)), self.dtype))
        return self

    def tensor_bernoulli(self, p=None, **kw):
        return bernoulli(self, p)

    def tensor_multinomial(self, num_samples, replacement=False, **kw):
        return multinomial(self, num_samples, replacement)

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        u = stream.take("torch.nn.functional.dropout", "dropout", "uniform", input.shape, {"p": float(p)})
        out = input * (t(u, like=input) >= p).to(input.dtype) / (1.0 - p) if p < 1 else input * 0
        return input.copy_(out) if inplace else out

    def feature_dropout(name, batched_ndim):
        def handler(input, p=0.5, training=True, inplace=False):
            if not training or p == 0:
                return input
            shape = _feature_shape(tuple(input.shape), batched_ndim)
            u = stream.take(f"torch.nn.functional.{name}", "feature_dropout", "uniform", shape, {"p": float(p)})
            out = input * (t(u, like=input) >= p).to(input.dtype) / (1.0 - p) if p < 1 else input * 0
            return input.copy_(out) if inplace else out
        return handler

    table = [
        (torch, "randn", randn), (torch, "rand", rand), (torch, "randn_like", randn_like),
        (torch, "rand_like", rand_like), (torch, "randint", randint), (torch, "randint_like", randint_like),
        (torch, "randperm", randperm), (torch, "normal", normal), (torch, "bernoulli", bernoulli),
        (torch, "multinomial", multinomial),
        (torch.Tensor, "uniform_", fill("uniform_", "uniform", "uniform", uniform_t)),
        (torch.Tensor, "normal_", fill("normal_", "normal", "normal", normal_t)),
        (torch.Tensor, "log_normal_", fill("log_normal_", "log_normal", "normal", log_normal_t)),
        (torch.Tensor, "exponential_", fill("exponential_", "exponential", "uniform", exponential_t)),
        (torch.Tensor, "cauchy_", fill("cauchy_", "cauchy", "uniform", cauchy_t)),
        (torch.Tensor, "geometric_", fill("geometric_", "geometric", "uniform", geometric_t)),
        (torch.Tensor, "bernoulli_", fill("bernoulli_", "bernoulli", "uniform", bernoulli_t)),
        (torch.Tensor, "random_", random_), (torch.Tensor, "bernoulli", tensor_bernoulli),
        (torch.Tensor, "multinomial", tensor_multinomial),
        (F, "dropout", dropout), (F, "dropout1d", feature_dropout("dropout1d", 3)),
        (F, "dropout2d", feature_dropout("dropout2d", 4)), (F, "dropout3d", feature_dropout("dropout3d", 5)),
    ]
    return [(owner, name, _entry(stream, getattr(owner, name), handler)) for owner, name, handler in table]


# ------------------------------------------------------------------------------------------------------- MindSpore


def _ms_patches(stream: Stream) -> list:
    import mindspore as ms
    from mindspore import mint, nn, ops

    from mindport.runtime import math as mp_math

    def t(values, dtype=None):
        return ms.Tensor(np.ascontiguousarray(values), ms.float64).astype(dtype or ms.float32)

    def randn(*args, dtype=None, seed=None, **kw):
        return t(stream.take("mindspore.ops.randn", "normal", "normal", _size(args, kw)), dtype)

    def rand(*args, dtype=None, seed=None, **kw):
        return t(stream.take("mindspore.ops.rand", "uniform", "uniform", _size(args, kw)), dtype)

    def standard_normal(shape, seed=None, **kw):
        return t(stream.take("mindspore.ops.standard_normal", "normal", "normal", _size((shape,), {})))

    def uniform(shape, minval, maxval, seed=None, dtype=ms.float32):
        u = t(stream.take("mindspore.ops.uniform", "uniform", "uniform", _size((shape,), {})), dtype)
        return minval + (maxval - minval) * u

    def randn_like(input, seed=None, *, dtype=None, **kw):
        return t(stream.take("mindspore.ops.randn_like", "normal", "normal", input.shape), dtype or input.dtype)

    def rand_like(input, seed=None, *, dtype=None, **kw):
        return t(stream.take("mindspore.ops.rand_like", "uniform", "uniform", input.shape), dtype or input.dtype)

    def randint(low, high, size, seed=None, *, dtype=None):
        u = stream.take("mindspore.ops.randint", "integers", "uniform", _size((size,), {}),
                        {"low": int(low), "high": int(high)})
        return ms.Tensor(low + np.floor(u * (high - low)), dtype or ms.int64)

    def randint_like(input, low, high, seed=None, *, dtype=None):
        u = stream.take("mindspore.ops.randint_like", "integers", "uniform", input.shape,
                        {"low": int(low), "high": int(high)})
        return ms.Tensor(low + np.floor(u * (high - low)), dtype or input.dtype)

    def randperm(n, seed=0, offset=0, dtype=ms.int64):
        u = stream.take("mindspore.ops.randperm", "permutation", "uniform", (int(n),))
        return ms.Tensor(np.argsort(u, kind="stable"), dtype)

    def normal(shape, mean, stddev, seed=None):
        shapes = [tuple(shape)] + [tuple(x.shape) for x in (mean, stddev) if isinstance(x, ms.Tensor)]
        like = next((x.dtype for x in (mean, stddev) if isinstance(x, ms.Tensor)), None)
        z = t(stream.take("mindspore.ops.normal", "normal", "normal", np.broadcast_shapes(*shapes)), like)
        return z * stddev + mean

    def multinomial(input, num_samples, replacement=True, seed=None):
        shape = _multinomial_shape(tuple(input.shape), num_samples, replacement)
        u = stream.take("mindspore.ops.multinomial", "multinomial", "uniform", shape,
                        {"num_samples": int(num_samples), "replacement": bool(replacement)})
        probs = input.asnumpy().astype(np.float64)
        return ms.Tensor(_multinomial(probs, int(num_samples), bool(replacement), u), ms.int32)

    def _masked(input, u, p):
        if p >= 1:
            return input * 0
        return input * t(u >= p, input.dtype) / (1.0 - p)

    def dropout(input, p=0.5, training=True, seed=None, **kw):
        if not training or p == 0:
            return input
        u = stream.take("mindspore.ops.dropout", "dropout", "uniform", input.shape, {"p": float(p)})
        return _masked(input, u, float(p))

    def feature_dropout(name, batched_ndim):
        def handler(input, p=0.5, training=True, **kw):
            if not training or p == 0:
                return input
            shape = _feature_shape(tuple(input.shape), batched_ndim)
            u = stream.take(f"mindspore.ops.{name}", "feature_dropout", "uniform", shape, {"p": float(p)})
            return _masked(input, u, float(p))
        return handler

    def dropout_cell(self, x):
        p = self.p if getattr(self, "p", None) is not None else 1.0 - self.keep_prob
        if not self.training or p == 0:
            return x
        return _masked(x, stream.take("mindspore.nn.Dropout", "dropout", "uniform", x.shape, {"p": float(p)}), p)

    def feature_dropout_cell(name, batched_ndim):
        def construct(self, x):
            p = 1.0 - self.keep_prob
            if not self.training or p == 0:
                return x
            shape = _feature_shape(tuple(x.shape), batched_ndim)
            return _masked(x, stream.take(f"mindspore.nn.{name}", "feature_dropout", "uniform", shape,
                                          {"p": float(p)}), p)
        return construct

    def gumbel_softmax(logits, tau=1.0, hard=False, dim=-1):
        u = t(stream.take("mindspore.ops.gumbel_softmax", "exponential", "uniform", logits.shape), logits.dtype)
        gumbels = -ops.log(-ops.log1p(-u))  # torch's -log(Exponential(1)) draw
        y = ops.softmax((logits + gumbels) / tau, dim)
        if not hard:
            return y
        depth = y.shape[dim]
        one_hot = ops.moveaxis(ops.one_hot(y.argmax(dim), depth, ops.ones((), y.dtype), ops.zeros((), y.dtype)),
                               -1, dim)
        return one_hot - ops.stop_gradient(y) + y

    class ReplayedGenerator:
        """What ``mindport.runtime.math._generator_stream`` hands a draw with ``generator=`` (a numpy Generator over
        the torch.Generator's stream): the recorded draws instead, for the forms the runtime reads."""

        def random(self, shape=None):
            return stream.take("mindport.runtime generator.random", "uniform", "uniform", _size((shape or (),), {}))

        def standard_normal(self, shape=None):
            return stream.take("mindport.runtime generator.standard_normal", "normal", "normal",
                               _size((shape or (),), {}))

        def integers(self, low, high=None, size=None):
            low, high = (0, low) if high is None else (low, high)
            u = stream.take("mindport.runtime generator.integers", "integers", "uniform", _size((size or (),), {}),
                            {"low": int(low), "high": int(high)})
            return (low + np.floor(u * (high - low))).astype(np.int64)

        def permutation(self, n):
            return np.argsort(stream.take("mindport.runtime generator.permutation", "permutation", "uniform",
                                          (int(n),)), kind="stable")

        def __getattr__(self, name):  # choice (multinomial), poisson: not replayed, said at the draw
            raise DrawsDiverged(f"the draw sequence diverged at draw {stream.position + 1}: the MindSpore port draws "
                                f"with generator= through numpy's {name}, which the replay does not serve")

    def generator_stream(generator, count):
        return ReplayedGenerator()

    def mint_randint(*args, dtype=None, **kw):
        low, high, size = (0, *args) if len(args) == 2 else args
        return randint(low, high, size, dtype=dtype)

    def mint_normal(mean=0.0, std=1.0, size=None, generator=None):
        return normal(() if size is None else tuple(size), mean, std)

    def mint_dropout(input, p=0.5, training=True, inplace=False):
        return dropout(input, p, training)

    table = [
        (ops, "randn", randn), (ops, "rand", rand), (ops, "standard_normal", standard_normal),
        (ops, "uniform", uniform), (ops, "randn_like", randn_like), (ops, "rand_like", rand_like),
        (ops, "randint", randint), (ops, "randint_like", randint_like), (ops, "randperm", randperm),
        (ops, "normal", normal), (ops, "multinomial", multinomial), (ops, "dropout", dropout),
        (ops, "dropout1d", feature_dropout("dropout1d", 3)), (ops, "dropout2d", feature_dropout("dropout2d", 4)),
        (ops, "dropout3d", feature_dropout("dropout3d", 5)), (ops, "gumbel_softmax", gumbel_softmax),
        (nn.Dropout, "construct", dropout_cell), (nn.Dropout2d, "construct", feature_dropout_cell("Dropout2d", 4)),
        (nn.Dropout3d, "construct", feature_dropout_cell("Dropout3d", 5)),
        (mint, "randn", randn), (mint, "rand", rand), (mint, "randn_like", randn_like),
        (mint, "rand_like", rand_like), (mint, "randint", mint_randint), (mint, "normal", mint_normal),
        (mint.nn.functional, "dropout", mint_dropout), (mp_math, "_generator_stream", generator_stream),
    ]
    return [(owner, name, _entry(stream, getattr(owner, name), handler)) for owner, name, handler in table]
