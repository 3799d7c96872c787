"""numpy's shape queries of a tensor in a static graph: ``np.shape(t)``, ``np.ndim(t)``.

In a model's method these are torch code's way to read a tensor's shape without knowing whether it holds a tensor or
an array (onpolicy's MAT: ``ori_shape = np.shape(state)``, then ``np.zeros((*ori_shape[:-1], 37))``). PyNative runs
numpy, which reads the tensor's shape. MindSpore 2.10's graph (GRAPH_MODE) interprets a numpy call (the JIT
Fallback): the result is a value of unknown type, and what uses it fails to compile (``(*ori_shape[:-1], 37)``: "The
starred unpack merge input must be sequence, but got AbstractAny"; measured).

Importing this module (``mindport.runtime._graph`` does) gives the graph its own forms of the two: of a tensor, its
static shape (a tuple) and rank, as numpy gives them; any other argument (a list, an array) keeps MindSpore's path.
``np.size`` is left alone: of a torch tensor numpy returns its ``size`` method, so torch code does not use it.
PyNative does not use these (numpy runs as before).
"""
from __future__ import annotations

import numpy as _np
from mindspore import Tensor
from mindspore.graph._parse import resources as _resources
from mindspore.ops import functional as _F

# numpy's own functions, reached through a list (a graph never looks a list up in the map), for other arguments
_HOST = [_np.shape, _np.ndim]


def graph_np_shape(a):
    """``np.shape`` in a graph: a tensor's shape, a tuple known while the graph compiles."""
    if isinstance(a, Tensor):
        return _F.shape(a)
    return _HOST[0](a)


def graph_np_ndim(a):
    """``np.ndim`` in a graph: a tensor's rank."""
    if isinstance(a, Tensor):
        return _F.rank(a)
    return _HOST[1](a)


def _install() -> None:
    table = _resources.convert_object_map
    if table.get(_np.shape) is graph_np_shape:
        return
    table[_np.shape] = graph_np_shape
    table[_np.ndim] = graph_np_ndim


_install()
