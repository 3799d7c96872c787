"""torch.nn.utils.rnn on MindSpore tensors: padding, unpadding and torch's PackedSequence.

MindSpore 2.10 has none of these (its ``nn.LSTM``/``GRU``/``RNN`` take the padded batch and ``seq_length``). The
functions keep torch's arguments and results: ``pad_sequence`` stacks sequences padded to the longest (time-major
unless ``batch_first``, ``padding_side`` 'right' or 'left'); ``pack_padded_sequence``/``pack_sequence`` build a
:class:`PackedSequence` (``data``: the time steps' valid rows one after another, ``batch_sizes``: int64 counts per
step, ``sorted_indices``/``unsorted_indices`` when the batch was reordered by length); ``pad_packed_sequence`` gives
back the padded batch and the int64 lengths in the original order. The packed data is built with MindSpore ops
(slices and concatenation), so gradients flow through it; the bookkeeping (lengths, batch sizes) is host-side
integers, as in torch, where lengths live on the CPU.

MindSpore's recurrent Cells take a padded batch and ``seq_length``; loading this module lets ``nn.LSTM``/``GRU``/``RNN``
(and classes built on them) take a PackedSequence as torch's do (:func:`_install_packed_input`). Shapes here depend on
values (lengths): inside a graph ``pack_padded_sequence``, ``pad_packed_sequence``, the recurrent layers and
:func:`packed_sequence` work on a graph form of the packed batch, the tuple of torch's four fields
(:func:`_graph_pack`); the rest raises there.
"""
from __future__ import annotations

from collections import namedtuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops.primitive import constexpr

from mindport.runtime._graph import host_only as _host_only
from mindport.runtime._graph import in_graph as _in_graph


def _pynative_only(name):
    _host_only(f"torch.nn.utils.rnn.{name} has value-dependent shapes and can't be compiled in "
               "graph mode; call it outside construct/@jit")


def _ints(values) -> list:
    if isinstance(values, Tensor):
        return [int(v) for v in values.asnumpy().reshape(-1)]
    return [int(v) for v in values]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """torch.nn.utils.rnn.pad_sequence: (T, B, *) or, with batch_first, (B, T, *)."""
    _pynative_only("pad_sequence")
    if padding_side not in ("right", "left"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = [sequences[i] for i in range(sequences.shape[0])]
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        short = longest - s.shape[0]
        if short:
            pad = ops.full((short,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = ops.cat((s, pad) if padding_side == "right" else (pad, s), 0)
        rows.append(s)
    return ops.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """torch.nn.utils.rnn.unpad_sequence: the list of sequences, each cut to its length. Without batch_first, torch
    transposes the caller's tensor in place (``transpose_(0, 1)``) and leaves it so: done here too."""
    _pynative_only("unpad_sequence")
    if not batch_first:
        padded_sequences.assign_value(ops.swapaxes(padded_sequences, 0, 1))
    return [padded_sequences[i][:n] for i, n in enumerate(_ints(lengths))]


def invert_permutation(permutation):
    """torch.nn.utils.rnn.invert_permutation: the index tensor that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    _pynative_only("invert_permutation")
    order = permutation.asnumpy().astype(np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.shape[0], dtype=np.int64)
    return Tensor(inverse, ms.int64)


_Packed = namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_Packed):
    """torch.nn.utils.rnn.PackedSequence(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None)."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        _pynative_only("PackedSequence")
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None and not isinstance(batch_sizes, Tensor):
            batch_sizes = Tensor(np.asarray(batch_sizes, np.int64))
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def astype(self, dtype):
        """What converted casts call (``packed.double()`` becomes ``packed.astype(ms.float64)``): torch's casts of a
        PackedSequence change its data only."""
        return type(self)(self.data.astype(dtype), self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def packed_sequence(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    """``torch.nn.utils.rnn.PackedSequence(...)`` called in a model's methods (the converter writes this there): the
    :class:`PackedSequence` in PyNative; in a graph its graph form, the plain tuple of torch's four fields
    (:func:`_graph_pack`), ``unsorted_indices`` computed from ``sorted_indices`` when not given, as torch does."""
    if _in_graph():
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _graph_inverse(sorted_indices)
        return data, batch_sizes, sorted_indices, unsorted_indices
    return PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """torch.nn.utils.rnn.pack_padded_sequence (in a graph: the graph form, :func:`_graph_pack`)."""
    if _in_graph():
        return _graph_pack(input, lengths, batch_first, enforce_sorted)
    _pynative_only("pack_padded_sequence")
    lengths = np.asarray(_ints(lengths), np.int64)
    if enforce_sorted:
        if np.any(lengths[:-1] < lengths[1:]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = Tensor(order.astype(np.int64))
        input = ops.gather(input, sorted_indices, 0 if batch_first else 1)
    if lengths.size == 0 or lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if batch_first:
        input = ops.swapaxes(input, 0, 1)
    steps = int(lengths[0])
    batch_sizes = np.array([int((lengths > t).sum()) for t in range(steps)], np.int64)
    data = ops.cat([input[t][:int(batch_sizes[t])] for t in range(steps)], 0)
    return PackedSequence(data, Tensor(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """torch.nn.utils.rnn.pad_packed_sequence: (padded, lengths), both in the batch's original order (in a graph:
    from the graph form, :func:`_graph_pad`)."""
    if _in_graph():
        return _graph_pad(sequence, batch_first, padding_value, total_length)
    _pynative_only("pad_packed_sequence")
    data, batch_sizes = sequence.data, _ints(sequence.batch_sizes)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch = batch_sizes[0]
    rows, offset = [], 0
    for t in range(steps):
        size = batch_sizes[t] if t < len(batch_sizes) else 0
        part = data[offset:offset + size] if size else data[:0]
        offset += size
        if size < batch:
            pad = ops.full((batch - size,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
            part = ops.cat((part, pad), 0) if size else pad
        rows.append(part)
    padded = ops.stack(rows, 0)
    lengths = np.array([sum(1 for s in batch_sizes if s > b) for b in range(batch)], np.int64)
    if sequence.unsorted_indices is not None:
        padded = ops.gather(padded, sequence.unsorted_indices, 1)
        lengths = lengths[sequence.unsorted_indices.asnumpy()]
    if batch_first:
        padded = ops.swapaxes(padded, 0, 1)
    return padded, Tensor(lengths)


def pack_sequence(sequences, enforce_sorted=True):
    """torch.nn.utils.rnn.pack_sequence: pad_sequence, then pack_padded_sequence with the sequences' lengths."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """torch.nn.utils.rnn.unpack_sequence: the list of sequences, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def _repack(padded, like: PackedSequence, batch_first: bool) -> PackedSequence:
    """The padded output of a recurrent Cell (original batch order) packed as ``like`` is: same batch sizes and
    orders, as torch's recurrent layers give a PackedSequence back."""
    if like.sorted_indices is not None:
        padded = ops.gather(padded, like.sorted_indices, 0 if batch_first else 1)
    if batch_first:
        padded = ops.swapaxes(padded, 0, 1)
    sizes = _ints(like.batch_sizes)
    data = ops.cat([padded[t][:sizes[t]] for t in range(len(sizes))], 0)
    return PackedSequence(data, like.batch_sizes, like.sorted_indices, like.unsorted_indices)


def _packed_call(cell, packed: PackedSequence, hx=None):
    """A torch recurrent layer called on a PackedSequence: MindSpore's Cell on the padded batch cut to each length,
    one call per distinct length (the sequences of that length together; its outputs past each length dropped, its
    final state each sequence's last valid step), the output packed again.

    Not one call with ``seq_length``: MindSpore 2.10's CPU LSTM/GRU/RNN given ``seq_length`` loses accuracy, even
    where every length is the whole batch's (measured: an LSTM 2.9e-5 to 9.3e-5 from torch on outputs of order 1,
    where the call without it equals torch exactly; las/encoder's proof diverged at 5.2e-4 at a random draw,
    tests/runtime/test_packed_lstm_accuracy51.py)."""
    batch_first = cell.batch_first
    padded, lengths = pad_packed_sequence(packed, batch_first=batch_first)
    sizes = _ints(lengths)
    groups = sorted(set(sizes), reverse=True)
    if len(groups) == 1:  # one length, the padded batch's own (pad_packed_sequence pads to the longest)
        out, state = _CELL_CALL(cell, padded, hx)
        return _repack(out, packed, batch_first), state
    axis, time = (0, 1) if batch_first else (1, 0)  # the batch and time axes of the input and the output
    steps = padded.shape[time]
    outs, states, order = [], [], []
    for length in groups:
        rows = [b for b, n in enumerate(sizes) if n == length]
        index = Tensor(np.array(rows, np.int64))
        part = ops.gather(padded, index, axis)
        part = part[:, :length] if batch_first else part[:length]
        out, state = _CELL_CALL(cell, part, _state_rows(hx, index))
        if length < steps:  # padded back: the rows past a length are dropped when packed again
            fill = list(out.shape)
            fill[time] = steps - length
            out = ops.cat((out, ops.zeros(tuple(fill), out.dtype)), time)
        outs.append(out)
        states.append(state)
        order += rows
    back = Tensor(np.argsort(np.array(order, np.int64), kind="stable").astype(np.int64))
    out = ops.gather(ops.cat(outs, axis), back, axis)
    if isinstance(states[0], tuple):
        state = tuple(ops.gather(ops.cat([s[i] for s in states], 1), back, 1) for i in range(len(states[0])))
    else:
        state = ops.gather(ops.cat(states, 1), back, 1)
    return _repack(out, packed, batch_first), state


def _state_rows(hx, index):
    """The initial state's rows of some sequences (axis 1: layers x batch x hidden), as torch's hx is."""
    if hx is None:
        return None
    if isinstance(hx, (tuple, list)):
        return tuple(ops.gather(h, index, 1) for h in hx)
    return ops.gather(hx, index, 1)


def _install_packed_input() -> None:
    """Loading this module (converted code that packs sequences imports it) lets MindSpore's nn.LSTM/GRU/RNN, and
    every class built on them (the runtime adapter of ``nn.LSTM`` held as a value: ``{'lstm': nn.LSTM}``), take a
    PackedSequence as torch's do. Only a Python call with a PackedSequence changes path (a static graph never holds
    one; any other call goes straight to ``Cell.__call__``)."""
    from mindspore import nn

    for cls in (nn.LSTM, nn.GRU, nn.RNN):
        if getattr(cls, "_mp_packed_input", False):
            continue

        # the class's own __call__ if it has one, else its base's looked up at each call: a later patch of
        # Cell.__call__ (the training runtime's _ReadParameters, which counts an LSTM's ParameterTuples as read)
        # reaches these layers too (bound here once, it did not: their weights with an exactly zero gradient were
        # never stepped once this module was loaded)
        def __call__(self, *args, __own=cls.__dict__.get("__call__"), __cls=cls, **kwargs):
            if args and isinstance(args[0], PackedSequence):
                return _packed_call(self, *args, **kwargs)
            if __own is not None:
                return __own(self, *args, **kwargs)
            return super(__cls, self).__call__(*args, **kwargs)

        cls.__call__ = __call__
        cls._mp_packed_input = True


# The graph form of a PackedSequence. A graph compiles no named tuple built in it (MindSpore interprets it as a Python
# object and its fields lose their types: a recurrent layer on one failed in its astype), so there a packed batch is
# the plain tuple of torch's four fields in torch's order (a PackedSequence is that named tuple): ``packed[0]`` is
# ``data``, ``[1]`` ``batch_sizes``, ``[2]`` ``sorted_indices``, ``[3]`` ``unsorted_indices``; the converter reads
# the fields by position in a model's methods (PackedFieldTransform) and writes ``PackedSequence(...)`` there as
# :func:`packed_sequence`. ``data`` holds torch's rows, the valid steps one after another, time-major, each step's
# rows in the sorted batch order: sum(lengths) rows, a shape from values, which a graph holds as a dynamic shape
# (measured on 2.10: Dense, elementwise ops, reductions and a sub-Cell take it). ``sorted_indices``/
# ``unsorted_indices`` are torch's (None with enforce_sorted). One difference: ``batch_sizes`` has one count per step
# of the padded input's time axis (a graph needs that length static: a recurrent layer or ``pad_packed_sequence``
# rebuilds the padded batch from it), so when that axis is longer than the longest sequence it ends in zeros where
# torch's stops (its sum, its first item and the rows it describes are torch's). The recurrent Cells take the graph
# form (_packed_construct: the padded batch rebuilt, run with seq_length, the output packed again), and
# pad_packed_sequence rebuilds the padded batch in the caller's order. A tuple made by pack_padded_sequence (and a
# recurrent layer's output of it) carries a fifth item, the static batch size: with enforce_sorted there are no
# sorted_indices to read it from, and batch_sizes[0] is a value (a dynamic batch axis failed later ops: ABSA's IAN
# split its attention heads along it). So unpacking it into torch's four names fails in a graph, loudly.
def _graph_lengths(lengths):
    if not isinstance(lengths, Tensor):  # a list of ints, or of a tensor's items (VQA: list(q_len.data))
        lengths = ops.stack([n.astype(ms.int64).reshape(()) if isinstance(n, Tensor) else
                             ops.scalar_to_tensor(n, ms.int64) for n in lengths])
    return lengths.astype(ms.int64).reshape(-1)


def _graph_inverse(order):
    return ops.sort(order.astype(ms.float32))[1].astype(ms.int64)


def _graph_valid(batch_sizes, batch):
    """The (steps, batch) mask of the valid rows of a sorted padded batch, and their flat positions (data's order)."""
    steps = batch_sizes.shape[0]
    valid = ops.arange(batch).reshape(1, -1).astype(ms.int64) < batch_sizes.reshape(steps, 1)
    return ops.nonzero(valid.reshape(-1)).reshape(-1, 1)


def _graph_pack(input, lengths, batch_first, enforce_sorted):
    if batch_first:
        input = ops.swapaxes(input, 0, 1)
    lengths = _graph_lengths(lengths)
    steps, batch = input.shape[0], input.shape[1]
    if lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    sorted_indices = None
    if enforce_sorted:
        if batch > 1 and (lengths[:-1] < lengths[1:]).any():
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
    else:  # torch's order: by length, longest first, ties in the batch's order
        key = lengths.astype(ms.float32) * batch - ops.arange(batch).astype(ms.float32)
        sorted_indices = ops.sort(key, descending=True)[1].astype(ms.int64)
        input = ops.gather(input, sorted_indices, 1)
        lengths = ops.gather(lengths, sorted_indices, 0)
    if lengths.max() > steps:
        raise RuntimeError("mindport: pack_padded_sequence: a length is longer than the padded input")
    batch_sizes = (ops.arange(steps).reshape(-1, 1).astype(ms.int64) < lengths.reshape(1, -1)).astype(
        ms.int64).sum(1)
    rows = _graph_valid(batch_sizes, batch)
    data = ops.gather_nd(input.reshape((steps * batch,) + input.shape[2:]), rows)
    unsorted_indices = None if sorted_indices is None else _graph_inverse(sorted_indices)
    return data, batch_sizes, sorted_indices, unsorted_indices, batch


def _graph_batch(sequence):
    """The batch size: static when the pack made the tuple (its fifth item) or sorted it; else batch_sizes[0]."""
    if len(sequence) > 4:
        return sequence[4]
    if sequence[2] is not None:
        return sequence[2].shape[0]
    return sequence[1][0]


def _graph_padded(sequence, padding_value=0.0):
    """The padded time-major batch (padding_value past each length) and the lengths, in the caller's order."""
    data, batch_sizes = sequence[0], sequence[1]
    steps, batch = batch_sizes.shape[0], _graph_batch(sequence)
    # each padded position takes its row of data, or the fill row after data's last (with enforce_sorted the batch
    # size is batch_sizes[0], a value: no shape is built from it)
    valid = (ops.arange(batch).reshape(1, -1).astype(ms.int64) < batch_sizes.reshape(steps, 1)).reshape(-1)
    count = valid.astype(ms.int32).cumsum(0)
    fill = ops.full((1,) + data.shape[1:], padding_value, dtype=data.dtype)
    position = ops.where(valid, count - 1, count[-1])
    padded = ops.gather(ops.cat((data, fill), 0), position, 0).reshape((steps, -1) + data.shape[1:])
    lengths = (batch_sizes.reshape(1, -1) > ops.arange(batch).reshape(-1, 1).astype(ms.int64)).astype(
        ms.int64).sum(1)
    if sequence[3] is not None:
        padded = ops.gather(padded, sequence[3], 1)
        lengths = ops.gather(lengths, sequence[3], 0)
    return padded, lengths


def _graph_repack(padded, like):
    """A recurrent Cell's padded time-major output (caller's order) packed as ``like`` is."""
    if like[2] is not None:
        padded = ops.gather(padded, like[2], 1)
    steps, batch = padded.shape[0], padded.shape[1]
    rows = _graph_valid(like[1], batch)
    data = ops.gather_nd(padded.reshape((steps * batch,) + padded.shape[2:]), rows)
    return (data, like[1], like[2], like[3]) + tuple(like[4:])


def _graph_pad(sequence, batch_first, padding_value, total_length):
    padded, lengths = _graph_padded(sequence, padding_value)
    steps = padded.shape[0]
    if total_length is None:
        padded = padded[:lengths.max()]
    elif total_length > steps:
        pad = ops.full((total_length - steps,) + padded.shape[1:], padding_value, dtype=padded.dtype)
        padded = ops.cat((padded, pad), 0)
    else:
        padded = padded[:total_length]
    if batch_first:
        padded = ops.swapaxes(padded, 0, 1)
    return padded, lengths


@constexpr(check=False)
def _static_steps(shape):
    """A recurrent layer's input in a graph needs a static time axis (MindSpore unrolls its loop over the steps; with
    an axis from a value, ``pad_packed_sequence``'s ``max(lengths)``, it fails in its Stack with no word of why)."""
    if shape is None or shape[0] is None or shape[0] < 0:
        raise RuntimeError("mindport: a recurrent layer in a graph needs a static time axis; this one comes from a "
                           "value (pad_packed_sequence cuts to max(lengths)): pass total_length= to "
                           "pad_packed_sequence, or run the layer in PyNative")
    return shape[0]


def _packed_construct(self, x, hx=None, seq_length=None):
    """MindSpore's recurrent construct, which also takes the graph form of a PackedSequence (a tuple) as ``x``."""
    if isinstance(x, tuple):
        padded, lengths = _graph_padded(x)
        _static_steps(padded.shape)
        if self.batch_first:
            padded = ops.swapaxes(padded, 0, 1)
        out, state = _RNN_CONSTRUCT(self, padded, hx, lengths.astype(ms.int32))
        if self.batch_first:
            out = ops.swapaxes(out, 0, 1)
        return _graph_repack(out, x), state
    return _RNN_CONSTRUCT(self, x, hx, seq_length)


def _install_packed_construct() -> None:
    from mindspore.nn.layer.rnns import _RNNBase

    global _RNN_CONSTRUCT
    if getattr(_RNNBase, "_mp_packed_construct", False):
        return
    _RNN_CONSTRUCT = _RNNBase.construct
    _RNNBase.construct = _packed_construct
    _RNNBase._mp_packed_construct = True


_RNN_CONSTRUCT = None


def _CELL_CALL(cell, *args, **kwargs):  # noqa: N802
    from mindspore import nn

    return nn.Cell.__call__(cell, *args, **kwargs)


_install_packed_input()
_install_packed_construct()
