"""``einops.layers.torch.Rearrange``/``Reduce`` for MindSpore: the same layers as Cells (no parameters)."""
from __future__ import annotations

from einops.layers import RearrangeMixin, ReduceMixin
from mindspore import nn

import mindport.runtime.einops_backend  # noqa: F401  (registers the backend the recipes run on)


class Rearrange(RearrangeMixin, nn.Cell):
    def __init__(self, pattern: str, **axes_lengths) -> None:
        nn.Cell.__init__(self)
        RearrangeMixin.__init__(self, pattern, **axes_lengths)

    def construct(self, x):
        return self._apply_recipe(x)


class Reduce(ReduceMixin, nn.Cell):
    def __init__(self, pattern: str, reduction: str, **axes_lengths) -> None:
        nn.Cell.__init__(self)
        ReduceMixin.__init__(self, pattern, reduction, **axes_lengths)

    def construct(self, x):
        return self._apply_recipe(x)
