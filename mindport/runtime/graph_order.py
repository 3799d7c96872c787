"""The order of a dict's keys (and of what ``sorted`` returns) in a static graph.

Measured on MindSpore 2.10, GRAPH_MODE, with ``d = {'b': x * 2, 'a': x + 1, 'c': x - 5}`` built in ``construct``:

* MindSpore compiles ``min``/``max`` with its own functions, which take a dict as its values: ``min(d), max(d)``
  gave two tensors where Python gives ``'a', 'c'``. Silent.
* ``sorted`` and ``reversed`` are run as Python by the JIT Fallback, which is handed a dict as the tuple of its values:
  ``sorted(d)`` gave the sorted values (when each is one element), ``reversed(d)`` the values in reverse,
  ``sorted(d.keys())`` "'tuple' object has no attribute 'keys'", ``[outs[k] for k in sorted(outs)]`` ran on values.
* What the Fallback's ``sorted`` returns for tensors is a run-time list a graph then iterates wrongly:
  ``[v for v in sorted(d.values())]`` gave one float (``[4.]``) for three tensors. Silent.

Importing this module (``mindport.runtime._graph`` does) gives the graph, once, its own forms of these builtins:

* ``sorted(iterable, key=None, reverse=False)``: a dict is its keys, as in Python; the order is computed while the
  graph compiles (keys are constants), then the items are taken by position, natively: ``sorted(d)``,
  ``sorted(d.keys())``, ``sorted(d.items())`` and ``sorted(['b', 'a'])`` compile and
  give Python's order (pairs compare by their first item; a tensor is compared only when first items are equal,
  and then refused); ``key=`` is applied in the graph (``key=lambda k: int(k[1:])``, ``key=len`` over names).
  A sort whose keys are known only at run time (tensors) is refused with mindport's TypeError rather than given to
  the Fallback, whose result a graph misreads.
* ``reversed(seq)``: a dict's keys, a list or a tuple, reversed natively (MindSpore interpreted ``reversed``);
  other arguments (a tensor, a range) keep MindSpore's path.
* ``min``/``max`` with a dict as their one argument: over its keys; of tensors and Python numbers together
  (``max(index.max() + 1, n)``): ``ops.maximum``/``ops.minimum`` of them, a tensor (MindSpore interpreted the call:
  a value of unknown type and shape that failed the ops after it); every other call is MindSpore's own.
* ``zip``: a SequentialCell among its arguments is its layers (torch iterates an ``nn.Sequential``'s children), a
  dict its keys (MindSpore's zip paired its values: ``zip(outs, weights)``).
* ``enumerate``: a dict is its keys (MindSpore's numbered its values: ``for i, k in enumerate(outs)``).
* ``functools.reduce``: a loop the graph compiles (the Fallback's result had a guessed dtype, Float64).
* ``all``/``any``: a loop the graph compiles. MindSpore evaluates them as Python (constant folding, else the
  Fallback) with their argument's source, and a comprehension, generator or lambda there sees none of the names it
  reads from outside itself: ``assert all([divisible_by(d, self.downsample_factor) for d in x.shape[-2:]])``
  (lucidrains' denoising-diffusion U-Net) stopped with "NameError: name 'divisible_by' is not defined", ``k = 2;
  any(d % k == 0 for d in x.shape)`` with "name 'k' is not defined" (a global, ``self``, a local alike; MindSpore
  2.10). A tensor argument keeps MindSpore's path (its elements are run-time values; a loop would be unrolled).

Not here, because a graph does not reach Python for them: ``set(d)`` (the Fallback gets the values; the converter
writes ``set(tuple(d))``, rules/list_sort.py), ``ks.sort()``/``ks.remove(v)`` (MindSpore's C++ list methods; the
converter re-binds the list), ``dict(d)`` (still the Fallback's: silent, see docs/static-graph.md).

PyNative does not use these (it runs Python's builtins), so PyNative results do not change. A converted file that
imports nothing else of mindport imports this module when a ``construct`` calls ``sorted``/``reversed`` or
``min``/``max`` of one argument (``mindport.migrator.imports.finalize_runtime``).
"""
from __future__ import annotations

import builtins as _builtins
import functools as _functools

from mindspore import Tensor
from mindspore import ops as _ops
from mindspore.nn import SequentialCell as _SequentialCell
from mindspore.graph._parse import parser as _parser
from mindspore.graph._parse import resources as _resources
from mindspore.graph._parse import standard_method as _standard
from mindspore.ops.primitive import constexpr

# The graph looks builtins up by identity in MindSpore's map; a list is never looked up, so the Fallback's own
# ``reversed``, ``all`` and ``any`` stay reachable through it for the arguments this module leaves to MindSpore.
_HOST = [_builtins.reversed, _builtins.all, _builtins.any]


@constexpr(check=False)
def _order(keys, reverse):
    """The positions of ``keys`` in sorted order (stable, as ``sorted``), computed while the graph compiles; a key
    known only at run time (a tensor) arrives as None."""
    if any(key is None for key in keys):
        raise TypeError("mindport: sorted() in a static graph needs keys known while it compiles (a dict's keys, "
                        "strings, numbers); these are known only at run time (tensors, or values read from an object "
                        "the graph interprets: a named tuple or a project's object built in the graph, MP107, makes "
                        "the tensors returned beside it of unknown rank, and MindSpore's own axis checks sort "
                        "them). Sort by a constant, or run this in PyNative")
    try:
        return tuple(_builtins.sorted(range(len(keys)), key=lambda i: keys[i], reverse=reverse))
    except TypeError:
        raise TypeError("mindport: sorted() in a static graph reached items known only at run time (tensors in "
                        "pairs with equal first items); sort by a constant, or run this in PyNative") from None


def _sort_key(item):
    """``item`` as the graph knows it while compiling: a tensor is None (inside a tuple too)."""
    if isinstance(item, Tensor):
        return None
    if isinstance(item, tuple):
        out = ()
        for part in item:
            out = out + (_sort_key(part),)
        return out
    return item


def graph_sorted(iterable, key=None, reverse=False):
    """``sorted`` in a graph (see the module's docstring)."""
    if isinstance(iterable, Tensor):
        return _order((None,), reverse)  # refused: a tensor's elements are known at run time
    items = tuple(iterable)  # a dict: its keys, in insertion order (MindSpore's tuple(d))
    keys = ()
    for item in items:
        keys = keys + (_sort_key(item if key is None else key(item)),)
    out = []
    for position in _order(keys, reverse):
        out.append(items[position])
    return out


def graph_reversed(seq):
    """``reversed`` in a graph: a dict's keys, a list or a tuple, reversed natively; anything else as MindSpore did."""
    if isinstance(seq, (dict, list, tuple)):
        return tuple(seq)[::-1]
    return _HOST[0](seq)


def _tensors_with_numbers(data):
    """Whether ``data`` (two or more) holds tensors and Python numbers and nothing else, at least one of each."""
    tensors, numbers = 0, 0
    for one in data:
        if isinstance(one, Tensor):
            tensors += 1
        elif isinstance(one, (int, float)):
            numbers += 1
    return len(data) >= 2 and tensors >= 1 and numbers >= 1 and tensors + numbers == len(data)


def _folded_extreme(data, pick):
    """The largest (``pick`` ops.maximum) or smallest value of tensors and numbers, as a tensor of the graph."""
    first = len(data)
    for i in _builtins.range(len(data) - 1, -1, -1):
        if isinstance(data[i], Tensor):
            first = i
    value = data[first]
    for i in _builtins.range(len(data)):
        if i != first:
            value = pick(value, data[i])
    return value


def graph_max(*data):
    """``max`` in a graph: one dict is its keys; tensors among Python numbers (``max(index.max() + 1, n)``) their
    largest value, a tensor (MindSpore interpreted the call, and its result, of unknown type and shape, failed the
    ops it reached: a ``one_hot`` depth, an einsum operand after it)."""
    if len(data) == 1 and isinstance(data[0], dict):
        return _standard.ms_max(tuple(data[0]))
    if _tensors_with_numbers(data):
        return _folded_extreme(data, _ops.maximum)
    return _standard.ms_max(*data)


def graph_min(*data):
    """``min`` in a graph: one dict is its keys; tensors among Python numbers their smallest value, a tensor."""
    if len(data) == 1 and isinstance(data[0], dict):
        return _standard.ms_min(tuple(data[0]))
    if _tensors_with_numbers(data):
        return _folded_extreme(data, _ops.minimum)
    return _standard.ms_min(*data)


def graph_zip(*data):
    """``zip`` in a graph: a SequentialCell is its layers, as iterating an ``nn.Sequential`` is in torch (FaceBoxes'
    ``zip(sources, self.loc, self.conf)``: MindSpore's zip failed on the Cell, "Invalid funcgraph node ... PolyNode",
    or built nothing), and a dict is its keys (MindSpore's zip read its values); everything else is MindSpore's own."""
    items = ()
    for one in data:
        if isinstance(one, (_SequentialCell, dict)):
            one = tuple(one)
        items = items + (one,)
    return _standard.ms_zip(*items)


def graph_enumerate(x, start=0):
    """``enumerate`` in a graph: a dict is its keys (MindSpore's ``enumerate_`` paired the numbers with its values)."""
    if isinstance(x, dict):
        return _standard.enumerate_(tuple(x), start)
    return _standard.enumerate_(x, start)


def graph_reduce(function, iterable, *initial):
    """``functools.reduce`` in a graph: a loop the graph compiles. MindSpore ran it through the JIT Fallback, whose
    result has a dtype guessed while compiling (Float64) that differs from the run's (Float32): SKNet's
    ``U = reduce(lambda x, y: x + y, output)`` then an in-place ReLU cast to the guess and failed ("Data type
    conversion is not supported ... Float32 ... Float64")."""
    items = tuple(iterable)
    if initial:
        value = initial[0]
        rest = items
    else:
        value = items[0]
        rest = items[1:]
    for item in rest:
        value = function(value, item)
    return value


def graph_all(iterable):
    """``all`` in a graph: Python's loop (True for nothing, stops at the first false item); a tensor as MindSpore did."""
    if isinstance(iterable, Tensor):
        return _HOST[1](iterable)
    for item in iterable:
        if not item:
            return False
    return True


def graph_any(iterable):
    """``any`` in a graph: Python's loop (False for nothing, stops at the first true item); a tensor as MindSpore did."""
    if isinstance(iterable, Tensor):
        return _HOST[2](iterable)
    for item in iterable:
        if item:
            return True
    return False


def _install() -> None:
    table = _resources.convert_object_map
    if table.get(_builtins.sorted) is graph_sorted or getattr(_resources, "_mindport_graph_order", False):
        return
    _resources._mindport_graph_order = True
    table[_builtins.sorted] = graph_sorted
    table[_builtins.reversed] = graph_reversed
    table[_builtins.max] = graph_max
    table[_builtins.min] = graph_min
    table[_builtins.zip] = graph_zip
    table[_builtins.enumerate] = graph_enumerate
    table[_functools.reduce] = graph_reduce
    table[_builtins.all] = graph_all
    table[_builtins.any] = graph_any
    # MindSpore lists ``reversed`` among the builtin types a graph must interpret; it is compiled now
    _parser._unsupported_python_builtin_type = tuple(
        kind for kind in _parser._unsupported_python_builtin_type if kind is not _builtins.reversed)


_install()
