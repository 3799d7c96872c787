"""torch's unbatched inputs for MindSpore's layers that take only a batch.

torch's convolutions, some pools, recurrent layers and their cells accept an input with no batch axis (a Conv2d a
(C, H, W) image, an LSTM a (seq, features) sequence with (layers, hidden) states, an LSTMCell a (features,) vector),
and its cells default the state to zeros; MindSpore's refuse both. Loading this module (it loads with
:mod:`mindport.runtime._graph`, which the runtime modules import) gives those classes a ``construct`` that takes
both: when the input has one axis fewer than a batch, the batch axis is added, the layer's own construct runs, and
the axis is removed again (from the states too). The batched path costs one rank comparison, a constant when
GRAPH_MODE compiles it.

The layer's own construct is kept on its class as the method ``_mp_batched_construct`` and called through ``self``,
never as a function given the Cell as an argument (``construct(self, x)``): GRAPH_MODE compiles ``self.<name>``
inside a Cell's methods as graph code (a ``property`` such as spectral_norm's or weight_norm's reparametrised
``weight`` is compiled with its parameter updates and gradients), but reads an attribute of a Cell passed to a
function with Python's ``getattr`` while compiling: the property would run eagerly at compile time (twice:
``hasattr`` then ``getattr``) and its value be frozen into the graph as a constant, with no gradient to the
parameters it is computed from (tests/runtime/test_unbatched_inputs.py,
``test_reparametrised_weight_stays_graph_code``).

Functional ops are the same class: ``FUNCTIONS`` of the table are this module's functions of those names
(``mindport.runtime.unbatched.max_pool2d``), which the mapping tables name in place of MindSpore's op.

Layers that take an unbatched input already (MindSpore's pools and paddings, mindport.runtime's) are not touched;
the classes changed are ``mindport.mappings.unbatched``'s table, the enumeration and its proof are in
tests/runtime/test_unbatched_inputs.py. Every ``mindport.runtime`` module converted code imports loads this one; a
converted file that imports none of them and builds one of these layers without showing its input batched gets
``import mindport.runtime.unbatched`` from the converter (``native_facts.unbatched_handling``).
"""
from __future__ import annotations

from mindspore import nn, ops

from mindport.mappings.unbatched import BATCH_RANK, CELLS, FUNCTIONS, RECURRENT

BATCHED = "_mp_batched_construct"  # the class's own construct, kept as a method (called as self.<BATCHED>(...))


def _unbatch(out, axis):
    """The batch axis removed from a layer's output, or from each output of a tuple (a pool's values and indices).
    Not recursive: a graph refuses a function that calls itself ("Side effect is undetectable") wherever its
    branch is compiled (PackNet's Conv3d, whose input rank a graph does not fold)."""
    if isinstance(out, tuple):
        return tuple(ops.squeeze(o, axis) for o in out)
    return ops.squeeze(out, axis)


def _state(hx, fn):
    if isinstance(hx, tuple):
        return fn(hx[0]), fn(hx[1])
    return fn(hx)


def _layer(rank):
    """The construct of a layer that needs a ``rank``-D batch, taking an input without the batch axis too."""
    def construct(self, x):
        if x.ndim == rank - 1:
            return _unbatch(self._mp_batched_construct(ops.expand_dims(x, 0)), 0)  # noqa: SLF001
        return self._mp_batched_construct(x)  # noqa: SLF001
    return construct


def _recurrent(self, x, hx=None, seq_length=None):
    """MindSpore's _RNNBase.construct (LSTM/GRU/RNN) taking torch's unbatched (seq, features) input, whose states are
    (layers * directions, hidden) (an LSTM's a (h, c) pair): the batch axis is 0 or 1 (batch_first) in the
    sequence, always 1 in the states."""
    if x.ndim == 2:
        axis = 0 if self.batch_first else 1
        if hx is not None:
            hx = _state(hx, lambda t: ops.expand_dims(t, 1))
        out, state = self._mp_batched_construct(ops.expand_dims(x, axis), hx, seq_length)  # noqa: SLF001
        return ops.squeeze(out, axis), _state(state, lambda t: ops.squeeze(t, 1))
    return self._mp_batched_construct(x, hx, seq_length)  # noqa: SLF001


def _cell(pair):
    """MindSpore's RNNCell/GRUCell/LSTMCell construct with torch's defaults: ``hx`` None is zeros (an LSTMCell's
    ``pair`` of them), and a (features,) input with (hidden,) states is one unbatched step."""
    def construct(self, x, hx=None):
        unbatched = x.ndim == 1
        if unbatched:
            x = ops.expand_dims(x, 0)
            if hx is not None:
                hx = _state(hx, lambda t: ops.expand_dims(t, 0))
        if hx is None:
            zeros = ops.zeros((x.shape[0], self.hidden_size), x.dtype)
            hx = (zeros, zeros) if pair else zeros
        out = self._mp_batched_construct(x, hx)  # noqa: SLF001
        if unbatched:
            return _unbatch(out, 0)
        return out
    return construct


def _function(op, rank):
    """``op`` (a ``mindspore.ops`` function that takes only a ``rank``-D batch) taking torch's unbatched input too:
    the input is the first positional argument (the tables emit it so), the rest pass through unchanged."""
    def function(input, *args, **kwargs):
        if input.ndim == rank - 1:
            return _unbatch(op(ops.expand_dims(input, 0), *args, **kwargs), 0)
        return op(input, *args, **kwargs)
    function.__name__ = function.__qualname__ = op.__name__
    function.__doc__ = (f"mindspore.ops.{op.__name__}, which takes only a {rank}-D batch, taking torch's unbatched "
                        f"{rank - 1}-D input too (mindport.mappings.unbatched.FUNCTIONS).")
    return function


# max_pool2d, avg_pool1d/2d/3d, lp_pool2d, adaptive_avg/max_pool1d: the module's functions, one per table row
globals().update({name: _function(getattr(ops, name), rank) for name, rank in FUNCTIONS.items()})


def _targets():
    """(class, its new construct) for every class this module changes (``mindport.mappings.unbatched``'s table)."""
    layers = [name for name in BATCH_RANK if name not in RECURRENT + CELLS]
    targets = [(getattr(nn, name), _layer(BATCH_RANK[name])) for name in layers]
    # MindSpore's _RNNBase: LSTM, GRU and RNN share its construct
    bases = {getattr(nn, name).__mro__[1] for name in RECURRENT}
    assert len(bases) == 1, bases
    targets.append((bases.pop(), _recurrent))
    targets += [(getattr(nn, name), _cell(name == "LSTMCell")) for name in CELLS]
    return targets


def _install() -> None:
    targets = _targets()
    classes = [cls for cls, _ in targets]
    # one method name serves every class only while none inherits from another (self.<BATCHED> would find the
    # subclass's original in the base's construct)
    assert not [(a, b) for a in classes for b in classes if a is not b and issubclass(a, b)], classes
    for cls, construct in targets:
        if BATCHED in cls.__dict__:
            continue  # installed already (the module reloaded)
        setattr(cls, BATCHED, cls.construct)
        construct.__doc__ = cls.construct.__doc__
        construct._mp_unbatched = True  # noqa: SLF001
        cls.construct = construct


_install()  # idempotent: what is changed already is left alone
