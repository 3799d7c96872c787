"""torch's unbatched inputs for MindSpore's layers that take only a batch.

torch's convolutions, some pools, recurrent layers and their cells accept an input with no batch axis (a Conv2d a
(C, H, W) image, an LSTM a (seq, features) sequence with (layers, hidden) states, an LSTMCell a (features,) vector),
and its cells default the state to zeros; MindSpore's refuse both. Loading this module (it loads with
:mod:`mindport.runtime._graph`, which the runtime modules import) wraps those classes' ``construct``: when the input
has one axis fewer than a batch, the batch axis is added, the layer runs, and the axis is removed again (from the
states too). The batched path costs one rank comparison. Being in ``construct``, it holds in GRAPH_MODE as well.

Layers that take an unbatched input already (MindSpore's pools and paddings, mindport.runtime's) are not touched;
the enumeration and its proof are in tests/runtime/test_unbatched_inputs.py.
"""
from __future__ import annotations

from mindspore import nn, ops


def _unbatch(out, axis):
    if isinstance(out, tuple):
        return tuple(_unbatch(o, axis) for o in out)
    return ops.squeeze(out, axis)


def accept_unbatched(construct, rank):
    """``construct(self, x)`` of a layer that needs a ``rank``-D batch, taking an input without the batch axis too."""
    if getattr(construct, "_mp_unbatched", False):
        return construct

    def wrapped(self, x):
        if x.ndim == rank - 1:
            return _unbatch(construct(self, ops.expand_dims(x, 0)), 0)
        return construct(self, x)

    wrapped._mp_unbatched = True
    wrapped.__doc__ = construct.__doc__
    return wrapped


def _state(hx, fn):
    if isinstance(hx, tuple):
        return fn(hx[0]), fn(hx[1])
    return fn(hx)


def _recurrent(construct):
    """MindSpore's _RNNBase.construct (LSTM/GRU/RNN) taking torch's unbatched (seq, features) input, whose states are
    (layers * directions, hidden) (an LSTM's a (h, c) pair): the batch axis is 0 or 1 (batch_first) in the
    sequence, always 1 in the states."""
    def wrapped(self, x, hx=None, seq_length=None):
        if x.ndim == 2:
            axis = 0 if self.batch_first else 1
            if hx is not None:
                hx = _state(hx, lambda t: ops.expand_dims(t, 1))
            out, state = construct(self, ops.expand_dims(x, axis), hx, seq_length)
            return ops.squeeze(out, axis), _state(state, lambda t: ops.squeeze(t, 1))
        return construct(self, x, hx, seq_length)

    wrapped._mp_unbatched = True
    return wrapped


def _cell(construct, pair):
    """MindSpore's RNNCell/GRUCell/LSTMCell construct with torch's defaults: ``hx`` None is zeros (an LSTMCell's
    ``pair`` of them), and a (features,) input with (hidden,) states is one unbatched step."""
    def wrapped(self, x, hx=None):
        unbatched = x.ndim == 1
        if unbatched:
            x = ops.expand_dims(x, 0)
            if hx is not None:
                hx = _state(hx, lambda t: ops.expand_dims(t, 0))
        if hx is None:
            zeros = ops.zeros((x.shape[0], self.hidden_size), x.dtype)
            hx = (zeros, zeros) if pair else zeros
        out = construct(self, x, hx)
        if unbatched:
            return _unbatch(out, 0)
        return out

    wrapped._mp_unbatched = True
    return wrapped


_BATCH_RANK = {nn.Conv1d: 3, nn.Conv2d: 4, nn.Conv3d: 5, nn.Conv1dTranspose: 3, nn.Conv2dTranspose: 4,
               nn.Conv3dTranspose: 5, nn.LPPool2d: 4, nn.AdaptiveAvgPool1d: 3, nn.AdaptiveMaxPool1d: 3}


def _install() -> None:
    for cls, rank in _BATCH_RANK.items():
        cls.construct = accept_unbatched(cls.construct, rank)
    base = nn.RNN.__mro__[1]  # MindSpore's _RNNBase: LSTM, GRU and RNN share its construct
    if not getattr(base.construct, "_mp_unbatched", False):
        base.construct = _recurrent(base.construct)
    for cls in (nn.RNNCell, nn.GRUCell, nn.LSTMCell):
        if not getattr(cls.construct, "_mp_unbatched", False):
            cls.construct = _cell(cls.construct, cls is nn.LSTMCell)


_install()  # idempotent: what is wrapped already is left alone
