"""An einops backend for MindSpore tensors, and einops' layers as Cells.

``import mindport.runtime.einops_backend`` registers the backend: einops finds backends among ``AbstractBackend``
subclasses whose ``framework_name`` module is loaded. ``Rearrange``/``Reduce`` are ``einops.layers.torch``'s layers as
Cells (no parameters); converted code imports them from ``mindport.runtime.einops_layers``."""
from __future__ import annotations

import sys

from einops._backends import AbstractBackend
from einops.layers import RearrangeMixin, ReduceMixin
from mindspore import nn


class MindSporeBackend(AbstractBackend):
    framework_name = "mindspore"

    def __init__(self) -> None:
        import mindspore
        from mindspore import ops

        self.ms = mindspore
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
        if operation == "sum":
            return self.ops.sum(x, dim=axes)
        if operation == "mean":
            return self.ops.mean(x, axis=axes)
        if operation == "max":
            return self.ops.amax(x, axis=axes)
        if operation == "min":
            return self.ops.amin(x, axis=axes)
        if operation == "prod":
            return self.ops.prod(x, axis=axes)
        if operation == "any":
            return self.ops.any(x, axis=axes)
        if operation == "all":
            return self.ops.all(x, axis=axes)
        raise NotImplementedError(f"unknown reduction {operation!r}")

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
        return sys.modules[__name__]  # Rearrange and Reduce below

    def einsum(self, pattern, *x):
        return self.ops.einsum(pattern, *x)

    def __repr__(self) -> str:
        return "<einops backend for mindspore>"


class Rearrange(RearrangeMixin, nn.Cell):
    def __init__(self, pattern: str, **axes_lengths) -> None:
        nn.Cell.__init__(self)
        RearrangeMixin.__init__(self, pattern, **axes_lengths)

    def construct(self, x):
        return self._apply_recipe(x)


class Reduce(ReduceMixin, nn.Cell):
    def __init__(self, pattern: str, reduction: str, **axes_lengths) -> None:
        nn.Cell.__init__(self)
        ReduceMixin.__init__(self, pattern, reduction, **axes_lengths)

    def construct(self, x):
        return self._apply_recipe(x)
