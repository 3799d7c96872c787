"""The MindSpore twin of ``mindport.discovery.passthrough_torch.Passthrough``: a Cell returning its first argument,
any others accepted (GRAPH_MODE compiles it)."""
from __future__ import annotations

from mindspore import nn


class Passthrough(nn.Cell):
    def construct(self, x, *args, **kwargs):
        return x
