"""numpy integers as tensor indices and slice bounds, as torch takes them.

torch takes any integer that has ``__index__`` where it takes an int; model code computes sizes with numpy
(WaveRNN: ``self.indent = pad * np.cumprod(scales)[-1]``, then ``m[:, :, self.indent:-self.indent]``; a dataset's
``__getitem__`` receives numpy indices). MindSpore's tensor indexing refuses them (``RuntimeError: Slice index type
must be int, tensor or none``; ``IndexError: Unsupported Python object type received: <class 'numpy.int64'>``).

Importing this module installs one guard at that point: ``Tensor.__getitem__``/``__setitem__`` turn numpy integers in
the index (alone, in a tuple, as slice bounds) into ints, and numpy arrays of integers or bools (``X[perm[:10]]``,
a batch drawn with ``np.random.permutation``; MindSpore: ``IndexError: Only support integers, slices ...``) into
tensors, and a ``range`` (``x[..., range(k)]``, which torch reads as the list of its ints; MindSpore: ``Unsupported
Python object type received: <class 'range'>``) into that list, before MindSpore reads the index; every other index passes unchanged. It is imported by ``mindport.runtime._graph``, which the runtime modules converted code imports load.
A static graph reads the index as a constant and is unchanged.

MindSpore's other refusals of numpy integers are argument checks (measured on 2.10: every layer constructor's sizes,
``nn.Dense(np.int64(4), 3)``, ``nn.Conv2d``, ``nn.LayerNorm((np.int64(4),))``, ``nn.LSTM``, pools, norms; an
``initializer`` shape; ``ops.pad``'s paddings, ``ops.split``/``chunk``/``softmax``/``interpolate``/``flatten``/
``arange``/``randn``): the same import wraps, once, the ``initializer`` function where MindSpore's modules (and the
runtime) bound it (``nn.LayerNorm((np.int64(4),))`` builds), and those ``ops`` functions, so each takes numpy
integers (alone, or in a tuple or list) as ints. Code that bound ``initializer`` by name before the runtime was
loaded keeps MindSpore's. The layer constructors' own checks are not wrapped: a wrapped ``__init__`` breaks building
the layer inside a compiled graph (MindSpore parses ``__init__`` there).
"""
from __future__ import annotations

import functools

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
    if kind is np.ndarray and index.dtype.kind in "iub":  # x[perm[:10]]: a numpy index array, as a tensor's
        return int(index) if index.ndim == 0 and index.dtype.kind != "b" else Tensor(index)
    if kind is range:  # x[..., range(k)] (STID): torch reads a range as the list of its ints
        return list(index)
    return index


if not _INSTALLED:
    _getitem, _setitem = Tensor.__getitem__, Tensor.__setitem__

    def __getitem__(self, index):  # noqa: N807 - Tensor's own
        return _getitem(self, _plain(index))

    def __setitem__(self, index, value):  # noqa: N807 - Tensor's own
        return _setitem(self, _plain(index), value)

    __getitem__._mindport_numpy_ints = True
    Tensor.__getitem__, Tensor.__setitem__ = __getitem__, __setitem__


# ------------------------------------------------------------------ numpy integers as sizes, shapes and paddings

def _ints(value):
    """A numpy integer as an int, and a tuple or list of values with its numpy integers as ints (the same object
    when it holds none)."""
    if isinstance(value, np.integer):
        return int(value)
    if type(value) in (tuple, list) and any(isinstance(v, np.integer) for v in value):
        return type(value)(int(v) if isinstance(v, np.integer) else v for v in value)
    return value


def _taking_ints(function):
    """``function`` with its arguments' numpy integers as ints (torch takes anything with ``__index__`` as a size)."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*(_ints(a) for a in args), **{k: _ints(v) for k, v in kwargs.items()})

    wrapper._mindport_numpy_ints = True
    return wrapper


# measured refusing a numpy integer (TypeError/ValueError from their argument checks) on MindSpore 2.10; the layers'
# own constructors (nn.Dense, nn.Conv2d, nn.LSTM, pools, norms ...) all do too, but a wrapper around a Cell's
# __init__ breaks building that Cell inside a compiled graph (MindSpore parses __init__ there): not wrapped
_OPS = ("pad", "split", "chunk", "softmax", "interpolate", "flatten", "arange", "randn", "rand", "randint")


def _install_sizes() -> None:
    import sys

    from mindspore import ops
    from mindspore.common import initializer as init_module

    original = init_module.initializer
    wrapped = _taking_ints(original)
    for module in list(sys.modules.values()):  # every module that bound it by name (MindSpore's layers import it)
        if module is not None and getattr(module, "initializer", None) is original:
            module.initializer = wrapped
    for name in _OPS:
        function = getattr(ops, name, None)
        if function is not None and not getattr(function, "_mindport_numpy_ints", False):
            setattr(ops, name, _taking_ints(function))


_install_sizes()  # idempotent: what is wrapped already is left alone
