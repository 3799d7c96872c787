"""The pieces of torch-based packages that model code uses most, for converted code: timm's ``DropPath``,
``drop_path``, ``Mlp``, ``to_2tuple`` and friends, ``make_divisible`` (``timm.layers``, also ``timm.models.layers``),
torchvision's ``StochasticDepth`` and ``stochastic_depth`` (``torchvision.ops``). timm's ``trunc_normal_`` is torch's
``nn.init.trunc_normal_`` (``mindport.runtime.init``).

Each behaves as the package's documented behaviour (written here from that description, not from its code), and is
the target of a mapping entry (``mindport/mappings/data/packages.toml``), proven against a torch reference of the
same behaviour when the package itself is not installed. Layers are built from torch's own entries through the
runtime adapter (``mindport.runtime.adapt``), so ``Mlp``'s Linear, GELU and Dropout map exactly as a converted
``nn.Linear``, ``nn.GELU`` and ``nn.Dropout`` do, and the parameters keep the package's names (``fc1.weight`` ...).
"""
from __future__ import annotations

import collections.abc

import mindspore as ms
from mindspore import nn, ops

from mindport.runtime.adapt import api


# ----------------------------------------------------------------------------------------------- tuple helpers

def to_ntuple(n: int):
    """timm's ``to_ntuple(n)``: a function giving an iterable (not a string) as a tuple, any other value repeated n
    times."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(x for _ in range(n))
    return parse


to_1tuple, to_2tuple, to_3tuple, to_4tuple = to_ntuple(1), to_ntuple(2), to_ntuple(3), to_ntuple(4)


def make_divisible(v, divisor=8, min_value=None, round_limit=0.9):
    """timm's ``make_divisible``: ``v`` rounded to the nearest multiple of ``divisor`` (at least ``min_value``,
    default ``divisor``), one ``divisor`` up when rounding lost more than ``1 - round_limit`` of ``v``."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


# ------------------------------------------------------------------------------------- stochastic depth (timm)

def _keep_mask(x, keep_prob: float, shape: tuple) -> ms.Tensor:
    return (ops.rand(shape, dtype=x.dtype) < keep_prob).astype(x.dtype)


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    """timm's ``drop_path``: in training, each sample (first axis) is zeroed with probability ``drop_prob``; the
    others are divided by ``1 - drop_prob`` when ``scale_by_keep`` (and ``drop_prob < 1``). Otherwise ``x``."""
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    mask = _keep_mask(x, keep_prob, (x.shape[0],) + (1,) * (x.ndim - 1))
    if keep_prob > 0.0 and scale_by_keep:
        mask = mask / keep_prob
    return x * mask


class DropPath(nn.Cell):
    """timm's ``DropPath(drop_prob, scale_by_keep)``: :func:`drop_path` in training mode, the identity in eval."""

    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True) -> None:
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def construct(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extend_repr(self) -> str:
        return f"drop_prob={round(self.drop_prob, 3):0.3f}"


# ---------------------------------------------------------------------------------------- stochastic depth (tv)

def stochastic_depth(input, p: float, mode: str, training: bool = True):  # noqa: A002 - torchvision's name
    """torchvision's ``stochastic_depth``: in training, ``mode="row"`` zeroes each sample with probability ``p``,
    ``mode="batch"`` the whole batch; survivors are divided by ``1 - p`` (when ``p < 1``). ``p`` outside [0, 1] or
    another mode raise ValueError, as there."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival = 1.0 - p
    shape = (input.shape[0],) + (1,) * (input.ndim - 1) if mode == "row" else (1,) * input.ndim
    mask = _keep_mask(input, survival, shape)
    if survival > 0.0:
        mask = mask / survival
    return input * mask


class StochasticDepth(nn.Cell):
    """torchvision's ``StochasticDepth(p, mode)``: :func:`stochastic_depth` with the Cell's training flag."""

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def construct(self, input):  # noqa: A002
        return stochastic_depth(input, self.p, self.mode, self.training)

    def extend_repr(self) -> str:
        return f"p={self.p}, mode={self.mode}"


# ------------------------------------------------------------------------------------------------------- Mlp

class Mlp(nn.Cell):
    """timm's ``Mlp``: ``fc1 -> act -> drop1 -> norm -> fc2 -> drop2``. ``hidden_features`` and ``out_features``
    default to ``in_features``; ``bias`` and ``drop`` may be pairs (one per linear layer); ``use_conv`` makes the
    linear layers 1x1 convolutions; ``norm_layer`` (a class, applied to the hidden features) defaults to none.
    ``act_layer`` is a layer class called with no argument (default torch's exact GELU)."""

    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=None, norm_layer=None,
                 bias=True, drop=0.0, use_conv=False, device=None, dtype=None) -> None:
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        bias, drop_probs = to_2tuple(bias), to_2tuple(drop)
        if use_conv:
            def linear(i, o, bias):
                return api("torch.nn.Conv2d")(i, o, kernel_size=1, bias=bias)
        else:
            linear = api("torch.nn.Linear")
        self.fc1 = linear(in_features, hidden_features, bias=bias[0])
        self.act = (act_layer or api("torch.nn.GELU"))()
        self.drop1 = api("torch.nn.Dropout")(drop_probs[0])
        self.norm = norm_layer(hidden_features) if norm_layer is not None else api("torch.nn.Identity")()
        self.fc2 = linear(hidden_features, out_features, bias=bias[1])
        self.drop2 = api("torch.nn.Dropout")(drop_probs[1])

    def construct(self, x):
        x = self.drop1(self.act(self.fc1(x)))
        return self.drop2(self.fc2(self.norm(x)))


__all__ = ["DropPath", "Mlp", "StochasticDepth", "drop_path", "make_divisible", "stochastic_depth", "to_1tuple",
           "to_2tuple", "to_3tuple", "to_4tuple", "to_ntuple"]


# ----------------------------------------------------------------------------------------------- apex AMP

def amp_initialize(models, optimizers=None, *args, **kwargs):
    """apex's ``amp.initialize(model, optimizer, opt_level=...)``: the models and optimizers as given (one or a list
    each, as apex returns them). A converted program runs in float32: apex casts for CUDA only, and its loss scaling
    changes no gradient a step reads (it unscales before the optimizer), so nothing is cast or wrapped."""
    return models if optimizers is None else (models, optimizers)


class amp_scale_loss:  # noqa: N801 - apex's name
    """apex's ``with amp.scale_loss(loss, optimizer) as scaled_loss:``: gives the loss itself, the scale a no-op (as
    GradScaler's on the CPU). The training rule reads the ``as`` name's ``.backward()`` as the loss's own
    (mindport/migrator/rules/training_loop.py ``_apex_scaled``), so the step is differentiated where the loss is
    computed."""

    def __init__(self, loss, optimizers=None, loss_id=0, model=None, delay_unscale=False, delay_overflow_check=False):
        self.loss = loss

    def __enter__(self):
        return self.loss

    def __exit__(self, *exc) -> bool:
        return False
