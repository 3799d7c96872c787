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
loaded keeps MindSpore's. The layer constructors are not wrapped (a wrapped ``__init__`` breaks building the layer
inside a compiled graph: MindSpore parses ``__init__`` there); the argument checks they call are (``_check_number``,
``check_number_range``, ``check_value_type`` of ``mindspore._checkparam``), so ``nn.Dense(np.int64(4), 3)``,
``nn.Embedding``, ``nn.BatchNorm1d``, ``nn.GroupNorm``, ``nn.Conv*`` ... take a numpy integer size as an int.

A 0-d integer tensor has ``__index__`` too: TensoRF builds its planes with ``torch.randn((1, n, gridSize[i], 1))``,
``gridSize`` a LongTensor. The same wrappers take it as an int, and the ``ops`` functions measured refusing it in
PyNative join them (``full``, ``normal``, ``standard_normal``, ``narrow``, ``tril_indices``/``triu_indices``, the
adaptive pools; ``ops.zeros``/``ones``/``arange``/``eye``/``randperm``/``one_hot`` and ``Tensor.view``/``reshape``/
``tile``/``broadcast_to``/``new_zeros`` take it as it is). No converted line changes, so native code stays native.
In a compiled graph a size held in a tensor is not a constant (``int(t[0])`` there is an unknown value too), so this
is PyNative's.

torch's setitem views the value without its leading size-1 axes before broadcasting it to the indexed part (DA-RNN's
``X_encoded[:, t, :] = h_n``, ``h_n`` an LSTM's (1, B, H) state); MindSpore's BroadcastTo refuses a value of higher
rank than the part. The ``__setitem__`` guard drops a tensor value's leading size-1 axes (a reshape, only where there
are some), which is torch's assignment in every case. A compiled graph does not call ``Tensor.__setitem__``: it
compiles MindSpore's ``setitem`` from ``mindspore.ops.composite.multitype_ops._compile_utils`` (``X[:, t] = h_n`` failed
there in RemoveExpandedDims: "Input array must have the same size across all dimensions", measured on 2.10). The same
import replaces, once, the functions of that module that assign a tensor value by a tuple, slice, int, tensor, list or
``...`` index with one that drops the value's statically known leading size-1 axes first (a reshape the graph
compiles, only where there are some), then calls MindSpore's. PyNative does not use them. A bool-mask setitem whose
value holds the masked rows, their count known only at run time (TensoRF's ``rgb[app_mask] = valid_rgbs``: "For
'BroadcastTo' ... x_shape: {-1, 3, 1}" in MindSpore's), is a MaskedScatter there, torch's order of filling. A write through step-less slices with a bound held in a tensor (a
KV cache's ``self.k[:, s:s + n] = x``, ``s`` the start position as a 0-d tensor) is a select over the data there, each
sliced axis's [start, stop) a mask and the value gathered to its positions: MindSpore 2.10's own compiles one such
write, but two Parameters written so in one graph stop in SequenceLenInferInner ("The pointer[seq_abs] is null"). A
slice of Python ints stays MindSpore's. The converter imports this module into a file whose ``construct`` writes
through a slice bound that may be a tensor (``mindport.migrator.imports._tensor_bound_slice_writes``).
"""
from __future__ import annotations

import functools

import mindspore
import numpy as np
from mindspore import Tensor

_INSTALLED = hasattr(Tensor.__getitem__, "_mindport_numpy_ints")
_INT_DTYPES = (mindspore.int8, mindspore.int16, mindspore.int32, mindspore.int64,
               mindspore.uint8, mindspore.uint16, mindspore.uint32, mindspore.uint64)


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


def _int_tensors(index):
    """The index with its Python ints (alone, in a tuple, in a list) as int64 tensors (the same object when it holds
    none): the same selection. Inside a gradient taken within another gradient (PyNative), MindSpore 2.10's getitem
    refuses a Python int anywhere in the index ("Only support integers, ... int, list and tuple as index, but got 0
    with type <class 'int'>", measured: ``x[0]``, ``x[i]``, ``x[[i]]``; slices, tensors pass), so a first-order MAML
    step (per task ``torch.autograd.grad(loss_k, params)`` of ``k_x[i]``, then the query loss, then ``backward``)
    failed; the guard retries with the ints as tensors."""
    if type(index) is int:
        return Tensor(index, mindspore.int64)
    if type(index) is list and index and all(type(i) is int for i in index):
        return Tensor(index, mindspore.int64)
    if type(index) is tuple and any(type(i) is int for i in index):
        return tuple(Tensor(i, mindspore.int64) if type(i) is int else i for i in index)
    return index


def _selects_nothing(index) -> bool:
    """An integer index tensor with no element (alone or in a tuple): torch assigns to no element (a no-op);
    MindSpore 2.10's setitem raises "select with an empty condition list is not possible" (cfh/connect4_a2c's
    ``draws[iact] = ...`` with ``iact = torch.where(wins == 0)[0]`` empty when every game is won)."""
    items = index if type(index) is tuple else (index,)
    return any(isinstance(i, Tensor) and i.size == 0 and i.dtype != mindspore.bool_ for i in items)


def _without_leading_ones(value):
    """A tensor value of a setitem without its leading size-1 axes, as torch assigns it (torch's setitem views the
    value without them, then broadcasts it to the indexed part: DA-RNN's ``X_encoded[:, t, :] = h_n``, ``h_n`` an
    LSTM's (1, B, H) final state, the part (B, H)); MindSpore's BroadcastTo refuses a value of higher rank than the
    part ("input's rank should be less equal ..."). Every other value passes unchanged (the same object)."""
    if not isinstance(value, Tensor):
        return value
    shape = value.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return value.reshape(shape[lead:]) if lead else value


if not _INSTALLED:
    _getitem, _setitem = Tensor.__getitem__, Tensor.__setitem__

    def __getitem__(self, index):  # noqa: N807 - Tensor's own
        index = _plain(index)
        try:
            return _getitem(self, index)
        except TypeError as error:
            held = _int_tensors(index)
            if held is index or "as index, but got" not in str(error):
                raise
            return _getitem(self, held)

    def __setitem__(self, index, value):  # noqa: N807 - Tensor's own
        index = _plain(index)
        if _selects_nothing(index):
            return None
        return _setitem(self, index, _without_leading_ones(value))

    __getitem__._mindport_numpy_ints = True
    Tensor.__getitem__, Tensor.__setitem__ = __getitem__, __setitem__


# ------------------------------------------------------------------ numpy integers as sizes, shapes and paddings

def _index_int(value, tensors: bool) -> bool:
    """Is ``value`` an integer torch reads as an int through ``__index__`` though it is no int: a numpy integer, or
    (``tensors``: in a size parameter) a 0-d integer tensor (TensoRF's ``torch.randn((1, n, gridSize[i], 1))``,
    ``gridSize`` a LongTensor)?"""
    if isinstance(value, np.integer):
        return True
    return tensors and isinstance(value, Tensor) and value.ndim == 0 and value.dtype in _INT_DTYPES


def _ints(value, tensors: bool = False):
    """A numpy integer (``tensors``: or a 0-d integer tensor) as an int, and a tuple or list of values with those as
    ints (the same object when it holds none)."""
    if _index_int(value, tensors):
        return int(value)
    if type(value) in (tuple, list) and any(_index_int(v, tensors) for v in value):
        return type(value)(int(v) if _index_int(v, tensors) else v for v in value)
    return value


def _taking_ints(function, sizes: tuple = ()):
    """``function`` with its arguments' numpy integers as ints (torch takes anything with ``__index__`` as a size),
    and the 0-d integer tensors in its size parameters ``sizes`` (names; ``"*"``: every positional argument) too.
    A tensor elsewhere (``ops.full``'s fill value, ``ops.flatten``'s input) stays a tensor."""
    import inspect

    names = list(inspect.signature(function).parameters)
    every = "*" in sizes
    positions = tuple(i for i, n in enumerate(names) if n in sizes)

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*(_ints(a, every or i in positions) for i, a in enumerate(args)),
                        **{k: _ints(v, k in sizes) for k, v in kwargs.items()})

    wrapper._mindport_numpy_ints = True
    return wrapper


# measured refusing a numpy integer (TypeError/ValueError from their argument checks) on MindSpore 2.10; the layers'
# own constructors (nn.Dense, nn.Conv2d, nn.LSTM, pools, norms ...) all do too, but a wrapper around a Cell's
# __init__ breaks building that Cell inside a compiled graph (MindSpore parses __init__ there): not wrapped
# A 0-d integer tensor (torch reads it as an int through __index__ too) is refused by the same functions and by
# ops.full/normal/standard_normal/narrow/adaptive pools/tril_indices/triu_indices (measured on 2.10, PyNative:
# "For primitive[StandardNormal], the input argument[shape] must be a type of {Int32, Int64}, but got Tensor[Int64]");
# ops.zeros/ones/arange/eye/randperm/one_hot, Tensor.view/reshape/tile/broadcast_to/new_zeros take it as it is.
_OPS = {  # name: its size parameters, where a 0-d integer tensor is an int too
    "pad": ("padding",), "split": ("split_size_or_sections", "axis"), "chunk": ("chunks", "axis"),
    "softmax": ("axis",), "interpolate": ("size",), "flatten": ("start_dim", "end_dim"), "arange": (),
    "randn": ("*",), "rand": ("*",), "randint": ("size",), "full": ("size",), "normal": ("shape",),
    "standard_normal": ("shape",), "narrow": ("axis", "start", "length"), "tril_indices": ("row", "col", "offset"),
    "triu_indices": ("row", "col", "offset"),
    **{f"adaptive_{kind}_pool{d}d": ("output_size",) for kind in ("avg", "max") for d in (1, 2, 3)}}


def _install_sizes() -> None:
    import sys

    from mindspore import ops
    from mindspore.common import initializer as init_module

    original = init_module.initializer
    wrapped = _taking_ints(original, ("shape",))
    for module in list(sys.modules.values()):  # every module that bound it by name (MindSpore's layers import it)
        if module is not None and getattr(module, "initializer", None) is original:
            module.initializer = wrapped
    for name, sizes in _OPS.items():
        function = getattr(ops, name, None)
        if function is not None and not getattr(function, "_mindport_numpy_ints", False):
            setattr(ops, name, _taking_ints(function, sizes))


_install_sizes()  # idempotent: what is wrapped already is left alone


# ------------------------------------------------------------------ numpy integers in the layers' argument checks

# The layer constructors refuse a numpy integer size through MindSpore's argument checks (measured on 2.10: Dense,
# BiDense, Conv1d/2d/3d and their transposes, LSTM/GRU/RNN and their cells, Embedding, BatchNorm1d/2d/3d, GroupNorm,
# PReLU; "For 'Dense', the 'in_channels' must be int, but got 'int64'", "the type of 'num_features' should be 'int'").
# A size arrives as one from numpy (``np.sum(env.observation_space.shape)``) or from a library that keeps its ints
# in numpy (gym's ``Discrete(2).n`` is ``np.int64``), often through another file, where no reading of the source
# can tell (the converter's own ``int(...)`` covers what it can see: native_facts.numpy_valued). torch reads any
# ``__index__`` integer as an int. The checks are module functions of ``mindspore._checkparam`` that the layers call
# through the module (``Validator.check_positive_int(in_channels, ...)``): the three that hold every int check
# (``_check_number``: check_int/check_positive_int/check_non_negative_int/...; ``check_number_range``:
# check_int_range; ``check_value_type``) are wrapped to check, and return, a numpy integer (alone, or in a tuple or
# list) as the int torch reads; every other value passes unchanged. A Cell's ``__init__`` itself is not wrapped (a
# compiled graph parses it), and the layer stores the int the check returns wherever it stores the checked value.
_CHECKS = {"_check_number": 0, "check_number_range": 0, "check_value_type": 1}  # name: the checked value's position


def _checking_ints(check, position: int):
    @functools.wraps(check)
    def wrapper(*args, **kwargs):
        if len(args) > position:
            args = (*args[:position], _ints(args[position]), *args[position + 1:])
        elif "arg_value" in kwargs:
            kwargs["arg_value"] = _ints(kwargs["arg_value"])
        return check(*args, **kwargs)

    wrapper._mindport_numpy_ints = True
    return wrapper


def _install_checks() -> None:
    from mindspore import _checkparam

    for name, position in _CHECKS.items():
        check = getattr(_checkparam, name, None)
        if check is not None and not getattr(check, "_mindport_numpy_ints", False):
            setattr(_checkparam, name, _checking_ints(check, position))


_install_checks()  # idempotent: what is wrapped already is left alone


# ------------------------------------------------------------------ a graph's setitem: the value's leading size-1 axes

from mindspore.ops import functional as _F  # noqa: E402
from mindspore.ops.composite.multitype_ops import _compile_utils as _cu  # noqa: E402
from mindspore.ops import operations as _P  # noqa: E402
from mindspore.ops.primitive import constexpr as _constexpr  # noqa: E402

_masked_scatter = _P.MaskedScatter()
_arange = mindspore.ops.arange


@_constexpr(check=False)
def _shape_without_leading_ones(shape):
    """``shape`` without its leading 1s, or None when it starts with none (a constant while the graph compiles; a
    dynamic axis, -1, is no 1)."""
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return tuple(shape[lead:]) if lead else None


def _graph_value(value):
    """A setitem value in a graph without its leading size-1 axes (torch's assignment), the same value otherwise."""
    if isinstance(value, Tensor):
        shape = _shape_without_leading_ones(_F.shape(value))
        if shape is not None:
            return _F.reshape(value, shape)
    return value


_SETITEMS = ("tensor_setitem_by_tuple_with_tensor", "tensor_setitem_by_slice", "tensor_setitem_by_number_with_tensor",
             "tensor_setitem_by_tensor_with_tensor", "tensor_setitem_by_list", "tensor_setitem_by_ellipsis_with_tensor")
# MindSpore's own, kept on the module at the first install (a second import of this module finds the replacements)
_ORIGINALS = getattr(_cu, "_mindport_setitems", None) or tuple(getattr(_cu, name) for name in _SETITEMS)
_by_tuple, _by_slice, _by_number, _by_tensor, _by_list, _by_ellipsis = _ORIGINALS


_slice_get_item = _cu.slice_get_item


def _tensor_bounded(index) -> bool:
    """Is ``index`` (a slice, or a tuple of slices) one whose slices have a start or stop held in a tensor (a KV
    cache's ``k[:, s:s + n] = x``, ``s`` a 0-d tensor) and no step? Any other item (an int, ``...``, None, a tensor
    index) or a step leaves MindSpore's setitem (a constant while the graph compiles)."""
    items = index if isinstance(index, tuple) else (index,)
    found = False
    for item in items:
        if not isinstance(item, slice):
            return False
        if _slice_get_item(item, "step") is not None:
            return False
        if isinstance(_slice_get_item(item, "start"), Tensor) or isinstance(_slice_get_item(item, "stop"), Tensor):
            found = True
    return found


def _bound(bound, default, dim):
    """A slice bound as a 0-d int64 tensor in [0, dim], negative bounds counted from the end (torch's reading)."""
    if bound is None:
        bound = default
    if isinstance(bound, Tensor):
        bound = _F.cast(bound, mindspore.int64)
    else:
        bound = _F.scalar_to_tensor(bound, mindspore.int64)
    bound = bound + _F.cast(bound < 0, mindspore.int64) * dim
    return _F.minimum(_F.maximum(bound, _F.scalar_to_tensor(0, mindspore.int64)),
                      _F.scalar_to_tensor(dim, mindspore.int64))


def _setitem_by_bounds(data, index, value):
    """``data[index] = value`` for slices with tensor bounds, as a select over the data: each sliced axis's positions
    within [start, stop) form a mask, and a value of that axis's length is gathered to the data's positions
    (position - start). MindSpore 2.10 compiles its own slice setitem with tensor bounds once in a graph, but two
    such writes to two Parameters fail in SequenceLenInferInner ("The pointer[seq_abs] is null"); this form compiles
    (shapes are the data's and the value's, constant) and is torch's assignment."""
    items = index if isinstance(index, tuple) else (index,)
    shape = _F.shape(data)
    rank = len(shape)
    value = _F.cast(value, _F.dtype(data))
    value = _F.reshape(value, (1,) * (rank - len(_F.shape(value))) + _F.shape(value))
    mask = None
    for axis, item in enumerate(items):
        dim = shape[axis]
        start = _bound(_slice_get_item(item, "start"), 0, dim)
        stop = _bound(_slice_get_item(item, "stop"), dim, dim)
        positions = _arange(0, dim, 1, dtype=mindspore.int64)
        along = (1,) * axis + (dim,) + (1,) * (rank - axis - 1)
        inside = _F.reshape(_F.logical_and(positions >= start, positions < stop), along)
        mask = inside if mask is None else _F.logical_and(mask, inside)
        length = _F.shape(value)[axis]
        if length != 1:
            taken = _F.minimum(_F.maximum(positions - start, _F.scalar_to_tensor(0, mindspore.int64)),
                               _F.scalar_to_tensor(length - 1, mindspore.int64))
            value = _F.gather(value, taken, axis)
    return _F.select(_F.broadcast_to(mask, shape), _F.broadcast_to(value, shape), data)


def _setitem_by_tuple(data, index, value):
    if isinstance(value, Tensor) and _tensor_bounded(index):
        return _setitem_by_bounds(data, index, _graph_value(value))
    return _by_tuple(data, index, _graph_value(value))


def _setitem_by_slice(data, index, value):
    if isinstance(value, Tensor) and _tensor_bounded(index):
        return _setitem_by_bounds(data, index, _graph_value(value))
    return _by_slice(data, index, _graph_value(value))


def _setitem_by_number(data, index, value):
    return _by_number(data, index, _graph_value(value))


@_constexpr(check=False)
def _scatters_rows(data_shape, index_rank, value_rank, value_shape, by_mask):
    """Is this a bool-mask setitem whose value holds the masked rows, a count known only at run time (TensoRF's
    ``rgb[app_mask] = valid_rgbs``, ``valid_rgbs = f(x[app_mask])``) or a static count the data's shape does not
    take? MindSpore's graph setitem broadcasts such a value to the data's shape and fails ("For 'BroadcastTo' ...
    x_shape: {-1, 3, 1}", "x_shape: {32, 16}"). A shape with a run-time axis reaches a constexpr as None (or holding
    -1)."""
    if not by_mask or data_shape is None or -1 in tuple(data_shape):
        return False
    rows = value_rank == 1 + len(data_shape) - index_rank
    static = value_shape is not None and -1 not in tuple(value_shape) and None not in tuple(value_shape)
    if not static:
        return rows
    # a static value of the rows' form that MindSpore's broadcast to the data's shape cannot take holds the masked
    # rows (LoRA's MergedLinear.zero_pad: ``result[self.lora_ind] = x``, x (32, 16) into a (48, 16) result); one that
    # broadcasts (a row, a (1, C) value, the data's own shape) is MindSpore's setitem, the same fill as torch's
    return rows and not _broadcasts(tuple(value_shape), tuple(data_shape))


def _broadcasts(shape, target):
    """Does ``shape`` broadcast to ``target`` (numpy's rule, trailing axes first)?"""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


@_constexpr(check=False)
def _fills_rows(data_shape, index_rank, value_shape, by_mask):
    """Is this a bool-mask setitem of one row for every masked row (``t[mask] = row``, row of shape (C,) or (1, C),
    the mask over the leading ``index_rank`` axes)? MindSpore 2.10's graph setitem fails on it ("x_shape: {3, 1}");
    torch and PyNative write the row into each masked row. Static shapes only (a run-time axis reaches here as None
    or -1)."""
    if not by_mask or data_shape is None or value_shape is None:
        return False
    data_shape, value_shape = tuple(data_shape), tuple(value_shape)
    if -1 in data_shape or -1 in value_shape or None in value_shape or not value_shape:
        return False
    return _broadcasts(value_shape, (1,) + data_shape[index_rank:])


def _setitem_by_tensor(data, index, value):
    if isinstance(value, Tensor) and _fills_rows(_F.shape(data), _F.rank(index), _F.shape(value),
                                                 _F.dtype(index) == mindspore.bool_):
        # one row for every masked row: the row broadcast to the data's shape, selected where the mask is set
        mask = _F.reshape(index, _F.shape(index) + (1,) * (_F.rank(data) - _F.rank(index)))
        row = _F.broadcast_to(_F.cast(value, _F.dtype(data)), _F.shape(data))
        return _F.select(_F.broadcast_to(mask, _F.shape(data)), row, data)
    if isinstance(value, Tensor) and _scatters_rows(_F.shape(data), _F.rank(index), _F.rank(value), _F.shape(value),
                                                    _F.dtype(index) == mindspore.bool_):
        # torch fills the masked positions with the value's elements in order: a MaskedScatter over the mask
        # broadcast to the data's shape, which compiles with a run-time row count
        mask = _F.reshape(index, _F.shape(index) + (1,) * (_F.rank(data) - _F.rank(index)))
        return _masked_scatter(data, _F.broadcast_to(mask, _F.shape(data)), _F.cast(value, _F.dtype(data)))
    return _by_tensor(data, index, _graph_value(value))


def _setitem_by_list(data, index, value):
    return _by_list(data, index, _graph_value(value))


def _setitem_by_ellipsis(data, value):
    return _by_ellipsis(data, _graph_value(value))


_cu._mindport_setitems = _ORIGINALS
for _name, _function in zip(_SETITEMS, (_setitem_by_tuple, _setitem_by_slice, _setitem_by_number, _setitem_by_tensor,
                                        _setitem_by_list, _setitem_by_ellipsis)):
    setattr(_cu, _name, _function)


# A numpy scalar on the left of an arithmetic operator with a tensor (``np.sqrt(d) * t``, FourierKAN's
# ``th.randn(...) / (np.sqrt(inputdim) * grid_norm_factor)``): torch's Tensor sets ``__array_priority__``, so numpy
# defers to the tensor's reflected operator and the result is a tensor. MindSpore's Tensor sets none: numpy converted
# the tensor to an ndarray and returned one, and the next tensor operation refused it ("Failed calling div with
# div(<class 'numpy.ndarray'>)"). The same priority as torch's gives the tensor's operator.
if getattr(Tensor, "__array_priority__", None) is None:
    Tensor.__array_priority__ = 1000


# A numpy array on the right of a tensor's arithmetic or bitwise operator (``position * div_term`` with ``div_term =
# 1 / (10000 ** (2 * np.arange(d) / d))``: oliverguhr/transformer-time-series-prediction's PositionalEncoding), or on
# the left of ``/``: torch's operator returns NotImplemented, numpy computes on the tensor's values and torch's
# ``__array_wrap__`` makes the result a tensor, of numpy's dtype (a float32 tensor times an int64 array is float64).
# MindSpore's operators refused the ndarray ("Failed calling Mul with Mul()(input=Tensor, other=<class
# 'numpy.ndarray'>)"); here numpy computes, as under torch. Host values (PyNative, or a constructor); numpy scalars and
# tensors keep MindSpore's own operator.
def _with_numpy_operand(name: str, compute):
    original = getattr(Tensor, name)

    @functools.wraps(original)
    def operator_(self, other):
        if type(other) is np.ndarray and other.dtype != object:
            return Tensor(np.asarray(compute(self.asnumpy(), other)))
        return original(self, other)

    operator_._mindport_numpy_operand = original
    return operator_


def _install_numpy_operands() -> None:
    import operator

    forward = {"__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
               "__truediv__": operator.truediv, "__floordiv__": operator.floordiv, "__mod__": operator.mod,
               "__pow__": operator.pow, "__matmul__": operator.matmul, "__and__": operator.and_,
               "__or__": operator.or_, "__xor__": operator.xor, "__lshift__": operator.lshift,
               "__rshift__": operator.rshift}
    reflected = {"__rtruediv__": lambda mine, theirs: theirs / mine}
    for name, compute in {**forward, **reflected}.items():
        if hasattr(Tensor, name) and not hasattr(getattr(Tensor, name), "_mindport_numpy_operand"):
            setattr(Tensor, name, _with_numpy_operand(name, compute))


_install_numpy_operands()
