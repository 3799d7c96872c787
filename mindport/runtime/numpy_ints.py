"""numpy integers as tensor indices and slice bounds, as torch takes them.

torch takes any integer that has ``__index__`` where it takes an int; model code computes sizes with numpy
(WaveRNN: ``self.indent = pad * np.cumprod(scales)[-1]``, then ``m[:, :, self.indent:-self.indent]``; a dataset's
``__getitem__`` receives numpy indices). MindSpore's tensor indexing refuses them (``RuntimeError: Slice index type
must be int, tensor or none``; ``IndexError: Unsupported Python object type received: <class 'numpy.int64'>``).

Importing this module installs one guard at that point: ``Tensor.__getitem__``/``__setitem__`` turn numpy integers in
the index (alone, in a tuple, as slice bounds) into ints before MindSpore reads the index; every other index passes
unchanged. It is imported by ``mindport.runtime._graph``, which the runtime modules converted code imports load.
A static graph reads the index as a constant and is unchanged. MindSpore's other refusals of numpy integers (a layer
constructor's sizes, an ``initializer`` shape, ``ops.pad``'s paddings) are argument checks, not this guard's.
"""
from __future__ import annotations

import numpy as np
from mindspore import Tensor

_INSTALLED = hasattr(Tensor.__getitem__, "_mindport_numpy_ints")


def _plain(index):
    """The index with numpy integers as ints (the same object when it holds none)."""
    kind = type(index)
    if kind is int or index is None:
        return index
    if kind is slice:
        bounds = (index.start, index.stop, index.step)
        if any(isinstance(b, np.integer) for b in bounds):
            return slice(*(int(b) if isinstance(b, np.integer) else b for b in bounds))
        return index
    if kind is tuple:
        items = tuple(_plain(i) for i in index)
        return items if any(a is not b for a, b in zip(items, index)) else index
    if isinstance(index, np.integer):
        return int(index)
    return index


if not _INSTALLED:
    _getitem, _setitem = Tensor.__getitem__, Tensor.__setitem__

    def __getitem__(self, index):  # noqa: N807 - Tensor's own
        return _getitem(self, _plain(index))

    def __setitem__(self, index, value):  # noqa: N807 - Tensor's own
        return _setitem(self, _plain(index), value)

    __getitem__._mindport_numpy_ints = True
    Tensor.__getitem__, Tensor.__setitem__ = __getitem__, __setitem__
