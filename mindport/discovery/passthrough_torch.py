"""The builder's stand-in for a constructor argument that is a sub-module (``attention``, ``model``, ``fn``): a torch
module that returns its first argument and accepts any others (``self.attention(x, x, x, attn_mask=mask)``,
``self.model(x, t)``), where ``nn.Identity`` took one argument only. It holds one parameter its forward never
reads, so a class that asks the module handed to it where it lives (``self.device = next(model.parameters()).device``:
a policy wrapper, an EMA) finds one ("StopIteration" otherwise). Its MindSpore twin:
``mindport.discovery.passthrough_ms``."""
from __future__ import annotations

import torch
import torch.nn as nn

from mindport.discovery.stand_in_sizes import SIZE_ATTRIBUTE, WIDTH


class Passthrough(nn.Module):
    def __init__(self):
        super().__init__()
        self.anchor = nn.Parameter(torch.zeros(1))

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if SIZE_ATTRIBUTE.fullmatch(name):
                return WIDTH  # DeepRL-pytorch's option-critic heads: ``nn.Linear(body.latent_dim, num_options)``
            raise

    def forward(self, x, *args, **kwargs):
        return x

    def __call__(self, *args, **kwargs):
        if not args or (isinstance(args[0], int) and not isinstance(args[0], bool)):
            # called as the layer class it stands for: ``norm_layer(out_planes)``, ``act_layer(inplace=True)`` (a
            # required ``norm_layer: Callable[..., nn.Module]``, wangji9/classification-models-pytorch's
            # EfficientNet InvertedResidual: its int went into ``nn.Sequential``, "int is not a Module subclass")
            return type(self)()
        return super().__call__(*args, **kwargs)


class Activation(Passthrough):
    """The stand-in for a required activation argument (``mlp(sizes, activation)`` calling ``activation()`` per
    layer, SpinningUp's actor-critic cores): a layer class or an activation function alike, tanh (no layer near the
    identity: the proof stays non-linear). Its MindSpore twin: ``passthrough_ms.Activation``."""

    def forward(self, x, *args, **kwargs):
        return torch.tanh(x)


def table(rows: int, columns: int):
    """A constructor's tensor argument (pretrained embeddings, ``nn.Parameter(weights)``): rows x columns float32
    values spread over [-1, 1], the same as ``passthrough_ms.table``'s."""
    import numpy as np
    import torch

    return torch.from_numpy(np.linspace(-1.0, 1.0, rows * columns, dtype=np.float32).reshape(rows, columns))
