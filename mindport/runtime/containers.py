"""Parameter containers that keep torch's parameter names.

``mindspore.ParameterTuple`` registers its members under their own names (``Parameter$1``), so a torch
``scales.0`` has nothing to land on; these Cells insert each parameter under its index or key instead.
"""
from __future__ import annotations

from mindspore import Parameter, Tensor, nn


def _as_parameter(value) -> Parameter:
    return value if isinstance(value, Parameter) else Parameter(Tensor(value))


class ParameterList(nn.Cell):
    def __init__(self, values=None) -> None:
        super().__init__()
        self._count = 0
        for value in values or ():
            self.append(value)

    def append(self, value):
        self.insert_param_to_cell(str(self._count), _as_parameter(value))
        self._count += 1
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def __getitem__(self, index: int) -> Parameter:
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return getattr(self, str(index))

    def __len__(self) -> int:
        return self._count

    def __iter__(self):
        return (getattr(self, str(i)) for i in range(self._count))


class ParameterDict(nn.Cell):
    def __init__(self, values=None) -> None:
        super().__init__()
        self._keys: list[str] = []
        for key, value in dict(values or {}).items():
            self[key] = value

    def __setitem__(self, key: str, value) -> None:
        self.insert_param_to_cell(key, _as_parameter(value))
        if key not in self._keys:
            self._keys.append(key)

    def __getitem__(self, key: str) -> Parameter:
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def keys(self):
        return list(self._keys)

    def values(self):
        return [getattr(self, k) for k in self._keys]

    def items(self):
        return [(k, getattr(self, k)) for k in self._keys]


def named_buffers(cell, prefix="", recurse=True, remove_duplicate=True):
    """``module.named_buffers()``: the converter makes each ``register_buffer`` a non-trainable Parameter, which a
    Cell's own ``named_buffers()`` does not list; these are the Cell's non-trainable Parameters, named by their path
    (a MindSpore layer's own statistics under MindSpore's names: ``moving_mean`` for torch's ``running_mean``)."""
    seen = set()
    for name, param in cell.parameters_and_names(name_prefix=prefix, expand=recurse):
        if param.requires_grad or (remove_duplicate and id(param) in seen):
            continue
        seen.add(id(param))
        yield name, param


def buffers(cell, recurse=True):
    """``module.buffers()``: the values of :func:`named_buffers`."""
    for _, param in named_buffers(cell, recurse=recurse):
        yield param
