"""torch references of ``timm.layers``' DropPath, drop_path, Mlp, trunc_normal_, to_*tuple and make_divisible,
written from their documented behaviour."""
import collections.abc

import torch
from torch import nn


def to_ntuple(n):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return (x,) * n
    return parse


to_1tuple, to_2tuple, to_3tuple, to_4tuple = (to_ntuple(n) for n in (1, 2, 3, 4))


def make_divisible(v, divisor=8, min_value=None, round_limit=0.9):
    """Nearest multiple of divisor (floor of v + divisor / 2), at least min_value (default divisor); one divisor up
    when that lost more than (1 - round_limit) of v."""
    lower = min_value or divisor
    rounded = max(lower, int(v + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < round_limit * v else rounded


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    """Per-sample stochastic depth: identity unless training with drop_prob > 0."""
    if not training or drop_prob == 0.0:
        return x
    keep = 1.0 - drop_prob
    mask = torch.empty((x.shape[0],) + (1,) * (x.dim() - 1), dtype=x.dtype).bernoulli_(keep)
    if scale_by_keep and keep > 0.0:
        mask = mask / keep
    return x * mask


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob, self.scale_by_keep = drop_prob, scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Same behaviour as torch.nn.init.trunc_normal_ (absolute bounds)."""
    return nn.init.trunc_normal_(tensor, mean, std, a, b)


class Mlp(nn.Module):
    """fc1 -> act -> drop1 -> norm -> fc2 -> drop2; pairs for bias and drop; 1x1 convolutions with use_conv."""

    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, norm_layer=None,
                 bias=True, drop=0.0, use_conv=False, device=None, dtype=None):
        super().__init__()
        hidden = hidden_features or in_features
        out = out_features or in_features
        biases, drops = to_2tuple(bias), to_2tuple(drop)

        def linear(i, o, b):
            return nn.Conv2d(i, o, 1, bias=b) if use_conv else nn.Linear(i, o, bias=b)

        self.fc1 = linear(in_features, hidden, biases[0])
        self.act = act_layer()
        self.drop1 = nn.Dropout(drops[0])
        self.norm = norm_layer(hidden) if norm_layer is not None else nn.Identity()
        self.fc2 = linear(hidden, out, biases[1])
        self.drop2 = nn.Dropout(drops[1])

    def forward(self, x):
        return self.drop2(self.fc2(self.norm(self.drop1(self.act(self.fc1(x))))))
