"""The MindSpore twin of ``mindport.discovery.passthrough_torch.Passthrough``: a Cell returning its first argument,
any others accepted (GRAPH_MODE compiles it)."""
from __future__ import annotations

from mindspore import nn


class Passthrough(nn.Cell):
    def construct(self, x, *args, **kwargs):
        return x


def table(rows: int, columns: int):
    """The MindSpore twin of ``passthrough_torch.table``: the same values as a ``mindspore.Tensor``."""
    import mindspore
    import numpy as np

    return mindspore.Tensor(np.linspace(-1.0, 1.0, rows * columns, dtype=np.float32).reshape(rows, columns))
