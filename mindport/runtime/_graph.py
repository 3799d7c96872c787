"""What the runtime does differently while MindSpore compiles a static graph (``GRAPH_MODE``, ``ms.jit``).

* :func:`in_graph`: True while a graph is being compiled, False in PyNative (a constant in both).
* :func:`in_fallback`: True while Python code runs on behalf of a graph through MindSpore's JIT Fallback (a class
  called in ``construct``, such as ``torch.Size(...)`` or ``torch.finfo(...)``, is run as Python, where
  :func:`in_graph` is False).
* :func:`host_only`: the guard of a helper that works only in the Python program (raises mindport's error there).
* :func:`named`: torch's named tuples (``.values``/``.indices``) in PyNative; plain tuples in a graph. A named tuple
  built inside a graph is not compiled: MindSpore keeps it as an interpreted Python object, and MindSpore functions
  written in Python then fail on its items (``ops.swapaxes(result.U, -2, -1)``: "unsupported operand type(s) for +:
  'range' and 'range'", measured on 2.10). So in graph code, read a result by position (``mp_math.sort(x)[0]``) or
  unpack it (``values, indices = mp_math.sort(x)``); ``.values`` compiles only in PyNative (lint MS413 flags it).
"""
from __future__ import annotations

import sys

from mindspore.ops.primitive import constexpr

from mindport.runtime import synchronous  # noqa: F401 - first: set before any kernel runs
from mindport.runtime import graph_order  # noqa: F401 - a dict's keys in sorted/reversed/min/max in a graph
from mindport.runtime import graph_bool  # noqa: F401 - torch's + and += of bool tensors (logical or) in a graph
from mindport.runtime import graph_div  # noqa: F401 - torch's / of integer tensors (float32) in a graph
from mindport.runtime import graph_compare  # noqa: F401 - a list == a number/string/tuple is a constant in a graph
from mindport.runtime import graph_refs  # noqa: F401 - a Parameter where a graph's type check wants a tensor
from mindport.runtime import frozen  # noqa: F401 - a frozen Parameter is told from a buffer (p.requires_grad = False)
from mindport.runtime import numpy_ints  # noqa: F401 - installs the guard for numpy integers in tensor indices
from mindport.runtime import graph_numpy_shapes  # noqa: F401 - np.shape/np.ndim of a tensor in a graph
from mindport.runtime import numpy_stream  # noqa: F401 - MindSpore's initializers leave numpy's stream alone
from mindport.runtime import reversed_tensor  # noqa: F401 - reversed(t) is t flipped along its first axis, as torch
from mindport.runtime import tensor_format  # noqa: F401 - format(t, spec) of a 0-d tensor is its number's, as torch
from mindport.runtime import sequential_members  # noqa: F401 - a layer set on a SequentialCell by attribute runs
from mindport.runtime import container_slices  # noqa: F401 - a container's slice keeps its layers' parameter names
from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs
from mindport.runtime import torch_members  # noqa: F401 - mapped layers answer torch's member names (norm.weight)


def _marker():
    return 0


@constexpr(check=False)
def _is_none(value):
    return value is None


def in_graph():
    """True while MindSpore compiles a graph: a function object is not a constant there, so the constexpr sees None
    (the trick ``mindspore.graph.api._run_in_jit`` uses); in PyNative it runs as plain Python and sees the function."""
    return _is_none(_marker)


def in_fallback():
    """True while the calling Python code runs on behalf of a graph being compiled or run: what the graph compiler
    can't parse (calling a Python class, e.g. ``Size(shape)``) MindSpore evaluates as Python through its JIT
    Fallback, ``mindspore.graph._parse.parser.eval_script`` (measured on 2.10: at compile time for constants and for
    tensors alike). :func:`in_graph` is False there (it is plain Python), so code reached that way looks for that frame
    on the stack. Plain Python only: a function the graph compiles calls :func:`in_graph` instead."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "eval_script" and "mindspore" in code.co_filename:
            return True
        frame = frame.f_back
    return False


def host_only(message: str) -> None:
    """Raise mindport's RuntimeError (``"mindport: " + message``) when the caller runs for a graph: compiled
    (:func:`in_graph`) or run as Python through the JIT Fallback (:func:`in_fallback`). The one guard of every
    runtime helper that only works in the Python program (files, NumPy draws, the data pipeline, seeds, Python lists):
    a graph would otherwise freeze its first value or fail with MindSpore's own words."""
    if in_graph() or in_fallback():
        raise RuntimeError("mindport: " + message)


def named(cls, *values):
    """``cls(*values)`` (a named tuple class) in PyNative, the plain tuple ``values`` in a graph (module docstring)."""
    if in_graph():
        return values
    return cls(*values)
