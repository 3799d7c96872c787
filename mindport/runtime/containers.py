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
