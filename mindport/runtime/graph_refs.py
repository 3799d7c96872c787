"""A Parameter where a graph's type check wants a plain tensor.

In a compiled graph MindSpore types a Parameter as ``Ref[Tensor[Float32]]`` and a computed tensor as
``Tensor[Float32]``. The 2-d grid sampler's type check compares the two types as they are, so a Parameter given
directly as ``input`` or ``grid`` of ``ops.grid_sample`` fails in GRAPH_MODE ("Input grid must have the same data
type with input x! input[x] data type = Ref[Tensor[Float32]] but input[grid] data type = Tensor[Float32]", measured
on 2.10: TensoRF's ``F.grid_sample(self.density_plane[i], grid)``, a ParameterList item). PyNative, the 3-d sampler
and a slice of the Parameter (``self.plane_coef[:, :n]``) pass.

Importing this module (``mindport.runtime._graph`` does) replaces, once, the 2-d sampler where MindSpore's functions
bound it (``grid_sampler_2d_impl``) with one that reshapes both arguments to their own shapes first: the same
values (gradients flow through a reshape), typed as a plain tensor. The converted line stays ``ops.grid_sample``.
"""
from __future__ import annotations

import sys

from mindspore.ops import functional as _F
from mindspore.ops.auto_generate import pyboost_inner_prim as _prims

# MindSpore's own, kept on its module at the first install (a second import of this module finds the replacement)
_grid_sampler_2d = getattr(_prims, "_mindport_grid_sampler_2d", None) or _prims.grid_sampler_2d_impl


def _plain(value):
    """``value`` as a plain tensor of the same shape and values (a Parameter loses its Ref type in a graph)."""
    return _F.reshape(value, _F.shape(value))


def grid_sampler_2d(input, grid, mode, padding_mode, align_corners):  # noqa: A002 - MindSpore's names
    return _grid_sampler_2d(_plain(input), _plain(grid), mode, padding_mode, align_corners)


def _install() -> None:
    _prims._mindport_grid_sampler_2d = _grid_sampler_2d
    for module in list(sys.modules.values()):  # every MindSpore module that bound it by name (ops.grid_sample's)
        if module is not None and getattr(module, "__name__", "").startswith("mindspore") \
                and getattr(module, "grid_sampler_2d_impl", None) is _grid_sampler_2d:
            module.grid_sampler_2d_impl = grid_sampler_2d


_install()
