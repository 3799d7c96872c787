"""What the runtime does differently while MindSpore compiles a static graph (``GRAPH_MODE``, ``ms.jit``).

* :func:`in_graph`: True while a graph is being compiled, False in PyNative (a constant in both).
* :func:`named`: torch's named tuples (``.values``/``.indices``) in PyNative; plain tuples in a graph. A named tuple
  built inside a graph is not compiled: MindSpore keeps it as an interpreted Python object, and MindSpore functions
  written in Python then fail on its items (``ops.swapaxes(result.U, -2, -1)``: "unsupported operand type(s) for +:
  'range' and 'range'", measured on 2.10). So in graph code, read a result by position (``mp_math.sort(x)[0]``) or
  unpack it (``values, indices = mp_math.sort(x)``); ``.values`` compiles only in PyNative (lint MS413 flags it).
"""
from __future__ import annotations

from mindspore.ops.primitive import constexpr


def _marker():
    return 0


@constexpr(check=False)
def _is_none(value):
    return value is None


def in_graph():
    """True while MindSpore compiles a graph: a function object is not a constant there, so the constexpr sees None
    (the trick ``mindspore.graph.api._run_in_jit`` uses); in PyNative it runs as plain Python and sees the function."""
    return _is_none(_marker)


def named(cls, *values):
    """``cls(*values)`` (a named tuple class) in PyNative, the plain tuple ``values`` in a graph (module docstring)."""
    if in_graph():
        return values
    return cls(*values)
