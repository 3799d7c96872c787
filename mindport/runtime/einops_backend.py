"""einops for MindSpore tensors: graph-safe ``rearrange``/``reduce``/``repeat``, the ``Rearrange``/``Reduce`` layers
as Cells, and an einops backend.

* :func:`rearrange`, :func:`reduce`, :func:`repeat` (and :func:`pack`/:func:`unpack`): einops' functions with einops' signatures, for calls whose pattern
  the converter can't compile into plain operations (``mindport/migrator/einops_patterns.py`` does that for string
  literals). They compile in a static graph (``GRAPH_MODE``, ``@jit``): einops' own recipe for the pattern and the
  input's shape is computed at compile time (a constexpr, so pattern and lengths must be constants there, as they
  are in practice: literals, attributes, shape arithmetic), and the graph holds only reshape/transpose/reduce/
  broadcast operations. einops itself does not compile there (its backend lookup is a try/except over a class
  registry). A callable ``reduction`` runs through einops (PyNative only).
* :class:`Rearrange`, :class:`Reduce`: ``einops.layers.torch``'s layers as Cells (no parameters) on the same path;
  converted code imports them from ``mindport.runtime.einops_layers``.
* ``import mindport.runtime.einops_backend`` also registers :class:`MindSporeBackend`: einops finds backends among
  ``AbstractBackend`` subclasses whose ``framework_name`` module is loaded, so ``einops.rearrange`` on a MindSpore
  tensor works too (PyNative only).
"""
from __future__ import annotations

import sys

import einops
import mindspore as ms
from einops import EinopsError
from einops._backends import AbstractBackend
from einops.einops import _prepare_recipes_for_all_dims, _prepare_transformation_recipe, _reconstruct_from_shape
from mindspore import nn, ops
from mindspore.ops.primitive import constexpr
from mindport.runtime import unbatched  # noqa: F401 - MindSpore's layers take torch's unbatched inputs
from mindport.runtime._graph import in_graph as _in_graph

_REDUCTIONS = ("sum", "mean", "max", "min", "prod", "any", "all")


# --- the recipe, at compile time ----------------------------------------------------------------------------------

@constexpr
def _plan(pattern, operation, lengths, shape):
    """einops' recipe for ``pattern`` applied to ``shape`` (all constants): (initial shape or None, permutation or
    None, reduced axes, ((position, length) of each added axis), final shape or None)."""
    recipe = _prepare_transformation_recipe(pattern, operation, tuple(name for name, _ in lengths), len(shape))
    init, perm, reduced, added, final, _ = _reconstruct_from_shape(recipe, tuple(shape), tuple(lengths))
    return (None if init is None else tuple(init), None if perm is None else tuple(perm), tuple(reduced),
            tuple(sorted(added.items())), None if final is None else tuple(final))


def _reduce_axes(x, reduction, axes):
    if reduction == "sum":
        return ops.sum(x, axes)
    if reduction == "mean":
        if not x.is_floating_point():
            raise NotImplementedError("reduce_mean is not available for non-floating tensors")  # as einops
        return ops.mean(x, axes)
    if reduction == "max":
        return ops.amax(x, axes)
    if reduction == "min":
        return ops.amin(x, axes)
    if reduction == "prod":  # torch's prod of integers (and bools) is int64
        return ops.prod(x if x.is_floating_point() else x.astype(ms.int64), axes)
    if reduction == "any":
        return ops.any(x, axes)
    return ops.all(x, axes)


def _transform(x, pattern, operation, lengths):
    """Run einops' recipe: reshape, transpose, reduce, add axes, reshape (each only when needed)."""
    init, perm, reduced, added, final = _plan(pattern, operation, lengths, x.shape)
    if init is not None:
        x = ops.reshape(x, init)
    if perm is not None:
        x = ops.transpose(x, perm)
    if reduced:
        x = _reduce_axes(x, operation, reduced)
    if added:
        for position, _ in added:
            x = ops.expand_dims(x, position)
        target = list(x.shape)
        for position, length in added:
            target[position] = length
        x = ops.broadcast_to(x, tuple(target))
    if final is not None:
        x = ops.reshape(x, final)
    return x


def _stacked(tensor):
    if isinstance(tensor, (list, tuple)):
        return ops.stack(tensor)
    return tensor


def _foreign(tensor):
    """Not a MindSpore tensor nor a list of them (a numpy array the converted code rearranges): einops' own function
    takes it, in PyNative. Never in a graph: there the answer is the constant False, so einops' branch is not
    compiled. An ``isinstance`` of a value the graph does not type as a constant (karras_unet's weight after
    ``pack``, ``l2norm`` and a ``math.sqrt`` of its sizes) left both branches in, and einops' own ``raise
    EinopsError`` stopped the compile ("Unsupported exception type: EinopsError", MindSpore 2.10)."""
    if _in_graph():
        return False
    if isinstance(tensor, (list, tuple)):
        return len(tensor) > 0 and not isinstance(tensor[0], ms.Tensor)
    return not isinstance(tensor, ms.Tensor)


def rearrange(tensor, pattern, **axes_lengths):
    """einops.rearrange for MindSpore tensors (or a list of them, stacked first); compiles in a static graph."""
    if _foreign(tensor):
        return einops.rearrange(tensor, pattern, **axes_lengths)
    return _transform(_stacked(tensor), pattern, "rearrange", tuple(axes_lengths.items()))


def repeat(tensor, pattern, **axes_lengths):
    """einops.repeat for MindSpore tensors (or a list of them, stacked first); compiles in a static graph."""
    if _foreign(tensor):
        return einops.repeat(tensor, pattern, **axes_lengths)
    return _transform(_stacked(tensor), pattern, "repeat", tuple(axes_lengths.items()))


def reduce(tensor, pattern, reduction, **axes_lengths):
    """einops.reduce for MindSpore tensors (or a list of them, stacked first); compiles in a static graph when
    ``reduction`` is one of einops' names ('sum', 'mean', 'max', 'min', 'prod', 'any', 'all'). A callable reduction
    goes through einops itself (PyNative only)."""
    if isinstance(reduction, str) and not _foreign(tensor):
        return _transform(_stacked(tensor), pattern, reduction, tuple(axes_lengths.items()))
    return einops.reduce(tensor, pattern, reduction, **axes_lengths)


@constexpr
def _pack_plan(pattern, shapes):
    """einops.pack's plan for inputs of ``shapes`` (constants): (the shape each input is reshaped to, the packed
    shapes, the axis they are concatenated on). einops' own pattern analysis and its errors (at compile time)."""
    from einops.packing import analyze_pattern

    before, after, least = analyze_pattern(pattern, "pack")
    reshapes, packed = [], []
    for i, shape in enumerate(shapes):
        shape = tuple(shape)
        if len(shape) < least:
            raise EinopsError(f"packed tensor #{i} (enumeration starts with 0) has shape {shape}, "
                              f"while pattern {pattern} assumes at least {least} axes")
        end = len(shape) - after
        packed.append(shape[before:end])
        reshapes.append((*shape[:before], -1, *shape[end:]))
    return tuple(reshapes), tuple(packed), before


@constexpr
def _unpack_plan(pattern, shape, packed_shapes):
    """einops.unpack's plan (constants): (the axis split, the length of each piece, the shape each piece takes)."""
    from einops.packing import analyze_pattern

    before, after, _ = analyze_pattern(pattern, "unpack")
    shape = tuple(shape)
    if len(shape) != before + 1 + after:
        raise EinopsError(f"unpack(..., {pattern}) received input of wrong dim with shape {shape}")
    packed_shapes = [tuple(p) for p in packed_shapes]
    lengths = []
    for p in packed_shapes:
        n = 1
        for v in p:
            n *= v
        lengths.append(-1 if -1 in p else n)
    if lengths.count(-1) > 1:
        raise EinopsError(f"unpack(..., {pattern}) received more than one -1 in {packed_shapes} and can't infer "
                          "dimensions")
    if -1 in lengths:
        lengths[lengths.index(-1)] = shape[before] - sum(v for v in lengths if v != -1)
    if sum(lengths) != shape[before] or any(v < 0 for v in lengths):
        raise EinopsError(f'Error during unpack(..., "{pattern}"): could not split axis of size {shape[before]} '
                          f"into requested {packed_shapes}")
    targets = tuple((*shape[:before], *p, *shape[before + 1:]) for p in packed_shapes)
    return before, tuple(lengths), targets


def pack(tensors, pattern):
    """einops.pack for MindSpore tensors: (the inputs reshaped around the ``*`` axes and concatenated, the shape each
    input had there); compiles in a static graph (einops' own function raises its EinopsError there, which a graph
    can't: "Unsupported exception type: EinopsError")."""
    if _foreign(tensors):
        return einops.pack(tensors, pattern)
    reshapes, packed, axis = _pack_plan(pattern, tuple(t.shape for t in tensors))
    parts = [ops.reshape(t, s) for t, s in zip(tensors, reshapes)]
    return ops.cat(parts, axis), list(packed)


def unpack(tensor, packed_shapes, pattern):
    """einops.unpack for MindSpore tensors: a list of pieces split along the ``*`` axis, each of its packed shape
    (one of them may hold -1); compiles in a static graph."""
    if _foreign(tensor):
        return einops.unpack(tensor, packed_shapes, pattern)
    axis, lengths, targets = _unpack_plan(pattern, tensor.shape, packed_shapes)
    out = []
    start = 0
    for length, target in zip(lengths, targets):
        out.append(ops.reshape(ops.narrow(tensor, axis, start, length), target))
        start += length
    return out


# --- layers --------------------------------------------------------------------------------------------------------

class Rearrange(nn.Cell):
    """einops.layers.torch.Rearrange as a Cell (no parameters); compiles in a static graph."""

    def __init__(self, pattern: str, **axes_lengths) -> None:
        super().__init__()
        _check(pattern, "rearrange", axes_lengths, type(self).__name__)
        self.pattern = pattern
        self.axes_lengths = tuple(axes_lengths.items())

    def construct(self, x):
        return _transform(x, self.pattern, "rearrange", self.axes_lengths)

    def extend_repr(self) -> str:
        return ", ".join([repr(self.pattern), *(f"{k}={v}" for k, v in self.axes_lengths)])


class Reduce(nn.Cell):
    """einops.layers.torch.Reduce as a Cell (no parameters); compiles in a static graph."""

    def __init__(self, pattern: str, reduction: str, **axes_lengths) -> None:
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise EinopsError(f"Unknown reduction {reduction}. Expect one of {_REDUCTIONS}.")
        _check(pattern, reduction, axes_lengths, type(self).__name__)
        self.pattern = pattern
        self.reduction = reduction
        self.axes_lengths = tuple(axes_lengths.items())

    def construct(self, x):
        return _transform(x, self.pattern, self.reduction, self.axes_lengths)

    def extend_repr(self) -> str:
        return ", ".join([repr(self.pattern), repr(self.reduction), *(f"{k}={v}" for k, v in self.axes_lengths)])


def _check(pattern, operation, axes_lengths, layer):
    """einops' own validation of a layer's pattern, when the layer is built (as einops' layers do)."""
    try:
        _prepare_recipes_for_all_dims(pattern, operation, tuple(axes_lengths))
    except EinopsError as exc:
        raise EinopsError(f" Error while preparing {layer}({pattern!r})\n {exc}") from None


# --- the einops backend (einops.rearrange on MindSpore tensors, PyNative) -------------------------------------------

class MindSporeBackend(AbstractBackend):
    framework_name = "mindspore"

    def __init__(self) -> None:
        self.ms = ms
        self.ops = ops

    def is_appropriate_type(self, tensor) -> bool:
        return isinstance(tensor, self.ms.Tensor)  # Parameter is a Tensor subclass

    def from_numpy(self, x):
        return self.ms.Tensor(x)

    def to_numpy(self, x):
        return x.asnumpy()

    def arange(self, start, stop):
        return self.ops.arange(start, stop, dtype=self.ms.int64)

    def shape(self, x):
        return tuple(x.shape)

    def reshape(self, x, shape):
        return self.ops.reshape(x, tuple(shape))

    def transpose(self, x, axes):
        return self.ops.transpose(x, tuple(axes))

    def reduce(self, x, operation, reduced_axes):
        axes = tuple(reduced_axes)
        if not axes:
            return x
        if operation not in _REDUCTIONS:
            raise NotImplementedError(f"unknown reduction {operation!r}")
        return _reduce_axes(x, operation, axes)

    def stack_on_zeroth_dimension(self, tensors: list):
        return self.ops.stack(tensors)

    def add_axis(self, x, new_position):
        return self.ops.expand_dims(x, new_position)

    def add_axes(self, x, n_axes, pos2len):
        repeats = [1] * n_axes
        for axis_position, axis_length in pos2len.items():
            x = self.add_axis(x, axis_position)
            repeats[axis_position] = axis_length
        return self.tile(x, tuple(repeats))

    def tile(self, x, repeats):
        return self.ops.tile(x, tuple(repeats))

    def concat(self, tensors, axis: int):
        return self.ops.cat(tuple(tensors), axis=axis)

    def is_float_type(self, x) -> bool:
        return x.dtype in (self.ms.float16, self.ms.float32, self.ms.float64, self.ms.bfloat16)

    def layers(self):
        return sys.modules[__name__]  # Rearrange and Reduce above

    def einsum(self, pattern, *x):
        # ops.einsum has no CPU kernel in MindSpore 2.10: torch.einsum's runtime function (pairwise batched matmuls)
        from mindport.runtime.math import einsum

        return einsum(pattern, *x)

    def __repr__(self) -> str:
        return "<einops backend for mindspore>"
