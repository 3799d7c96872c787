"""A layer set on a ``SequentialCell`` by attribute runs in it, as in torch's ``nn.Sequential``.

torch's ``Sequential.forward`` runs ``self._modules.values()``: a child replaced by attribute
(``setattr(seq, "0", new_layer)``, the way LoRA injectors walk ``named_children()`` and swap every ``nn.Linear``: FLUX's
``replace_linear_with_lora``) or added under a new name runs from then on. MindSpore's ``SequentialCell.construct``
runs ``cell_list``, a list made when the cell was built and refreshed only by its own ``__setitem__``/``append``/
``insert``: ``Cell.__setattr__`` put the new layer in ``_cells`` (its parameters listed, its weights filled) while the
old one kept running, and the port returned the old layer's numbers with no error.

Importing this module installs, once: setting a Cell on a ``SequentialCell`` by attribute refreshes its run list from
``_cells``, as its ``__setitem__`` does. Other attributes (``cell_list`` itself, plain values) are set as before. It is
imported by ``mindport.runtime._graph`` and ``mindport.runtime.containers``, which the runtime modules converted code
imports load. Set in ``__init__`` (or before the first call): a static graph compiles the members it finds then.
"""
from __future__ import annotations

from mindspore import nn

_setattr = nn.SequentialCell.__setattr__


def _sequential_setattr(self, name, value):
    _setattr(self, name, value)
    cells = self.__dict__.get("_cells")
    if isinstance(value, nn.Cell) and cells is not None and cells.get(name) is value \
            and "cell_list" in self.__dict__:
        object.__setattr__(self, "cell_list", list(cells.values()))


if not getattr(nn.SequentialCell.__setattr__, "_mp_sequential_members", False):
    _sequential_setattr._mp_sequential_members = True
    nn.SequentialCell.__setattr__ = _sequential_setattr
