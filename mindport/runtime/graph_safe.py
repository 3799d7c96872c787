"""Python idioms MindSpore's static graph (GRAPH_MODE, ``ms.jit``) compiles to wrong values, written the way it
compiles them right. Converted code imports this module as ``mp_graph_safe``; the converter rule that emits each
call says why (docs/converter/)."""
from __future__ import annotations

from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs
from mindport.runtime._graph import in_graph as _in_graph

import functools as _functools

from mindspore import Tensor as _Tensor
from mindspore import jit_class as _jit_class
from mindspore.ops.primitive import constexpr as _constexpr

# the values callable_test answers False for at compile time: never called
_NEVER_CALLED = (_Tensor, bool, int, float, complex, str, bytes, tuple, list, dict, type(None))


def merged_dict(*parts):
    """``{**a, **b, 'k': v}``: a new dict with each part's items in order, a later key replacing an earlier one.

    A dict display with ``**`` compiles in a graph but reads wrong values (``{**a}['k']`` gives an empty tuple, not
    the tensor stored under 'k': measured on MindSpore 2.10); ``dict.update`` compiles right."""
    out = {}
    for part in parts:
        out.update(part)
    return out


def joined(parts):
    """The lists in ``parts`` joined in order: ``[f(a, b) for a in xs for b in ys]`` is ``joined([[f(a, b) for b in
    ys] for a in xs])`` (ComprehensionForsTransform).

    MindSpore's static graph takes one ``for`` per comprehension; it compiles ``sum(parts, [])``, which Python runs in
    time quadratic in the number of parts, so PyNative (a module's function called on a long list too) extends one
    list instead."""
    if _in_graph():
        return sum(parts, [])
    out = []
    for part in parts:
        out.extend(part)
    return out


def missing_key(key):
    """A key a dict read by position does not hold (FunctionKeyedDictTransform: a module-level dict keyed by
    functions, read in a graph through tuples of its keys and values): KeyError, as the dict's lookup raises."""
    raise KeyError(key)


def dict_copy(source):
    """``dict(x)`` of one argument: a dict is copied item by item (``update``), anything else goes to ``dict``.

    In a graph, ``dict(d)`` of a dict holding tensors built a wrong dict, silently (its items iterated as
    ``[e[k] for k in dict(d)]`` gave one tensor where Python gave three: measured on MindSpore 2.10, graph19's
    probe), and a write to the copy failed to compile; ``update`` compiles right. Whether ``x`` is a dict is known only
    when the graph is built, hence a helper (``isinstance`` is decided at compile time there)."""
    if isinstance(source, dict):
        out = {}
        out.update(source)
        return out
    return dict(source)


def is_exactly(value, classes):
    """``type(value) is C`` (``classes`` a class) or ``type(value) in (A, B)`` (a tuple of classes).

    MindSpore's static graph does not fold ``type(x) is tuple`` to a constant, so an ``if`` or a conditional
    expression on it compiles both branches, and the one the input never takes fails (a layer that is None called,
    a tensor added to None: measured on 2.10). ``isinstance`` it folds: in a graph the test is ``isinstance`` (a
    graph has no subclass of a tuple, list or dict to tell apart: named tuples are plain tuples there, a ``constexpr``
    is handed ``(1, 2)`` for a Cell's ``P(1, 2)``), with bool told from int as ``type`` does; in PyNative it is
    ``type`` itself, compared with ``==``: the converter's class for a torch layer class used as a value (``type(m) ==
    nn.Linear`` -> ``is_exactly(m, TorchLinear)``) equals MindSpore's class it stands for, which ``is`` would miss."""
    if _in_graph():
        if isinstance(value, bool):
            return classes is bool or (isinstance(classes, tuple) and bool in classes)
        return isinstance(value, classes)
    if isinstance(classes, tuple):
        return type(value) in classes
    return type(value) == classes  # noqa: E721 - a torch layer class used as a value (TorchLinear) equals its base


def zip_strict(*iterables):
    """``zip(*iterables, strict=True)``: MindSpore's static graph has a ``zip`` without ``strict`` ("Got an unexpected
    keyword argument 'strict'", MindSpore 2.10). In a graph the arguments are sequences of known length (tuples,
    lists, a CellList), checked as Python checks them; in PyNative it is Python's own ``zip``."""
    if not _in_graph():
        return zip(*iterables, strict=True)
    count = len(iterables[0])
    for i in range(1, len(iterables)):
        if len(iterables[i]) != count:
            raise ValueError("zip() arguments have different lengths")
    return zip(*iterables)


def callable_test(test, value):
    """``test(value)`` for a test of whether a value is called (``callable``, ``inspect.isfunction``/``ismethod``/
    ``isroutine``/``isbuiltin``/``isclass``), answered False for a value of a type that is never one (a tensor, a
    number, a string, None, a tuple, list or dict).

    ``d() if isfunction(d) else d`` (latent-diffusion's and many models' ``default(val, d)``) with a tensor ``d`` in a
    graph: MindSpore runs ``isfunction(d)`` / ``callable(d)`` through the JIT Fallback, whose answer (False) is not a
    compile-time constant, so the graph compiles both branches and ``d()`` on a tensor fails ("The object is not
    callable", measured on 2.10). ``isinstance`` is decided at compile time there, so for such a value the test is a
    constant and the call is never compiled; any other value gets ``test`` itself, as before."""
    if isinstance(value, _NEVER_CALLED):
        return False
    return test(value)


@_constexpr
def _folded(function, args):
    return function(*args)


def math_call(function, *args):
    """``function(*args)`` for a function of Python's ``math`` module (``math.sqrt(n)``, ``math.log(d)``), computed
    while the graph compiles when every argument is a number (a shape, a size: constants there).

    A graph runs ``math``'s functions through the JIT Fallback, whose result is an interpreted object, not a
    constant: a tensor reshaped with it is one too, and its shape can no longer be read ("The starred unpack merge
    input must be sequence, but got AbstractAny" for ``b, n, _, h = *x.shape, heads`` in the next layer:
    vit-pytorch's PiT pooling, ``h = int(sqrt(tokens.shape[1]))``; measured on 2.10). Computed as a constant, it is
    Python's own number. Any other argument (a tensor, in PyNative or in a graph) gets ``function`` itself.

    The converter writes it only where the file's ``math`` names something else: a call read from the module,
    ``math.sqrt(n)``, is compiled by the graph itself (the Fallback took only a bare ``sqrt`` imported by name;
    MathCallTransform)."""
    for arg in args:
        if not isinstance(arg, (int, float)):
            return function(*args)
    return _folded(function, args)


@_jit_class
class partial:  # noqa: N801 - functools' name, which converted code calls it by
    """``functools.partial(func, *args, **keywords)`` for a partial a model's ``__init__`` keeps on the model (``self.fn
    = partial(softmax, dim=-1)``, called in ``forward``): an object MindSpore's static graph compiles (``ms.jit_class``).

    functools' partial object held on a Cell is run by a graph as Python through the JIT Fallback; what it returns is
    an interpreted object, and the next operation on it fails ("The tensor should have only one element, but got 0"
    in the einsum after x-transformers' ``self.attn_fn = partial(softmax_fn, dtype=torch.float32)``; measured on
    MindSpore 2.10). Same meaning as functools': positional arguments first, the call's keywords replacing the
    partial's; a partial of a partial (functools' or this) is flattened, as functools flattens its own; ``func``,
    ``args`` and ``keywords`` read as functools' do."""

    def __init__(self, func, *args, **keywords):
        if isinstance(func, (partial, _functools.partial)):
            args = tuple(func.args) + args
            keywords = merged_dict(func.keywords, keywords)
            func = func.func
        if not callable(func):
            raise TypeError("the first argument must be callable")
        self.func = func
        self.args = args
        self.keywords = keywords

    def __call__(self, *args, **kwargs):
        return self.func(*self.args, *args, **merged_dict(self.keywords, kwargs))

    def __repr__(self):
        parts = [repr(self.func), *(repr(a) for a in self.args), *(f"{k}={v!r}" for k, v in self.keywords.items())]
        return f"{type(self).__name__}({', '.join(parts)})"
