"""A slice of a ``SequentialCell``/``CellList`` leaves its layers' parameter names alone, as torch's does.

torch's ``nn.Sequential[1:]`` and ``nn.ModuleList[1:]`` are new containers holding the same modules; nothing about
those modules changes (a state_dict names a parameter by the path it is read from). MindSpore's slices build a new
container too, but its constructor renames every parameter of the layers it is given after their position in the new
container (``Cell.update_parameters_name``: ``out_layers.3.weight`` becomes ``3.weight``), and the rename sticks on
the shared Parameter objects. A slice taken in ``construct`` (guided-diffusion's and improved-diffusion's ResBlock:
``out_norm, out_rest = self.out_layers[0], self.out_layers[1:]``) therefore
  * in GRAPH_MODE, gives two blocks' parameters the same name and the compile fails ("The parameter ... its name
    '3.weight' already exists", measured on 2.10 with every ResBlock of a UNet);
  * in PyNative, runs, but leaves the model's parameters renamed after the first call: a checkpoint saved then holds
    ``3.weight`` where the model was built with ``out_layers.3.weight``, and loading it back misses them.

Importing this module (``mindport.runtime._graph`` and ``mindport.runtime.containers`` do) installs, once: the slice
of a ``SequentialCell`` or ``CellList`` (and of their subclasses: guided-diffusion's TimestepEmbedSequential) is
MindSpore's own new container, with every parameter's name put back as it was before the slice. Registering the new
container on a Cell later (``self.head = self.body[2:]`` in ``__init__``) names the parameters from their path, as
before. An integer index is unchanged (no new container).
"""
from __future__ import annotations

from mindspore import nn


def _keeping_names(getitem):
    def __getitem__(self, index):  # noqa: N807 - the dunder being replaced
        if not isinstance(index, slice):
            return getitem(self, index)
        names = [(param, param.name) for cell in self._cells.values()
                 for param in cell.get_parameters(expand=True)]
        part = getitem(self, index)
        for param, name in names:
            if param.name != name:
                param.name = name
        return part

    __getitem__._mp_slice_names = True  # noqa: SLF001
    __getitem__.__doc__ = getitem.__doc__
    return __getitem__


def _install() -> None:
    for cls in (nn.SequentialCell, nn.CellList):
        if not getattr(cls.__getitem__, "_mp_slice_names", False):
            cls.__getitem__ = _keeping_names(cls.__getitem__)


_install()
