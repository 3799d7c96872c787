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


_CALLS: dict = {}


def converted_call(code: str, namespace: dict) -> tuple:
    """(args, kwargs) of a converted constructor call whose conversion defines names of its own (a torch layer class
    handed as a value, ``norm_layer=nn.BatchNorm2d``, becomes a class the conversion writes, ``TorchBatchNorm2d``):
    ``code`` (those definitions, then ``_mindport_ctor = _mindport_call(...)``) run in a copy of the model module's
    namespace. Once per code and namespace: the ``*args`` and ``**kwargs`` halves of the call get the same objects."""
    key = (code, id(namespace))
    if key not in _CALLS:
        scope = dict(namespace)
        scope["_mindport_call"] = lambda *args, **kwargs: (args, kwargs)
        exec(compile(code, "<mindport constructor>", "exec"), scope)  # noqa: S102 - our own conversion's text
        _CALLS.clear()
        _CALLS[key] = scope["_mindport_ctor"]
    return _CALLS[key]
