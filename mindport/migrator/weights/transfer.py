"""Filling a Cell: the planned tensors gathered from the state_dict, cast and transformed, set on the Cell's
parameters (``transfer_weights``)."""
from __future__ import annotations

import inspect
import re

import numpy as np

from mindport.errors import MigrationError
from mindport.migrator.weights.loading import _release, for_model, load_state_dict
from mindport.migrator.weights.plan import _cell_paths, _gather, plan_transfer
from mindport.migrator.weights.report import TransferReport


def transfer_weights(state_dict_or_path, cell, *, strict: bool = True, name_map: dict[str, str] | None = None
                     ) -> TransferReport:
    """Fill ``cell`` in place from a torch state_dict (or a module, or a checkpoint path).

    Raises :class:`MigrationError` naming every unmatched key (with the closest candidates) when ``strict`` and
    anything is unmatched; with ``strict=False`` it fills what matches and the report lists the rest.
    """
    import mindspore as ms

    state = for_model(load_state_dict(state_dict_or_path), (name for name, _ in cell.parameters_and_names()))
    _materialize_lazy_layers(state, cell)
    plan, report = plan_transfer(state, cell, name_map)
    if report.unexpected and _create_lazy_buffers(state, cell, report.unexpected):
        plan, report = plan_transfer(state, cell, name_map)
    if strict and not report.ok:
        raise MigrationError("weights do not line up with the MindSpore model", report.errors)
    for item in plan.items:
        array = _gather(state, item)
        if item.buffer is not None:
            sub, name = item.buffer
            sub._buffers[name] = ms.Tensor(np.array(array), dtype=sub._buffers[name].dtype)  # noqa: SLF001
        else:
            item.param.set_data(ms.Tensor(np.array(array), dtype=item.param.dtype))
        if state.mapped:
            for key in item.sources:
                _release(state[key])
    report.weight_map = plan
    return report


def _materialize_lazy_layers(state, cell) -> None:
    """torch's lazy layers (``nn.LazyLinear``, ...) that have not seen an input take their sizes from the weights
    loaded into them (``LazyModuleMixin``'s load hook): so do mindport.runtime.layers' Lazy* Cells, before the plan
    compares shapes. Their Parameters are resized in place, so an optimizer built before holds the loaded ones."""
    for path, sub in _cell_paths(cell).items():
        if not hasattr(sub, "_size_of") or not sub.has_uninitialized_params():
            continue
        prefix = f"{path}." if path else ""
        shapes = {key[len(prefix):]: tuple(getattr(state[key], "shape", ())) for key in state.keys()
                  if key.startswith(prefix) and "." not in key[len(prefix):]}
        size = sub._size_of(shapes)  # noqa: SLF001 - the lazy layer reads its size from torch's tensor shapes
        if size:
            sub.materialize(size)


def _create_lazy_buffers(state, cell, keys: list[str]) -> bool:
    """Buffers a model registers only on its first forward (pytorch-generative's ``__call__`` override sets
    ``self._c/_h/_w`` from the first image's shape, and its own ``load_state_dict`` override creates them before
    loading, so a fresh torch model takes the checkpoint): a torch key ``<cell path>.<name>`` whose Cell exists, lacks
    ``name`` (absent or None, or a plain tensor a PyNative forward of the port left there: a cache the port keeps as an
    attribute, torch as the buffer ``register_buffer(name, None)`` made), and whose own class code (not MindSpore's)
    assigns ``self.<name>`` is created here as the non-trainable Parameter a buffer is, as that code would, then
    filled like any other. Any other unmatched key stays an error (a renamed layer, a MindSpore layer's other parameter
    names). True when one was created."""
    import mindspore as ms

    created = False
    cells = _cell_paths(cell)  # the plan's own path -> sub-cell map (torch's names: ``blocks.0``)
    for key in keys:
        path, _, name = key.rpartition(".")
        sub = cells.get(path)
        held = getattr(sub, name, None) if isinstance(sub, ms.nn.Cell) else None
        if not isinstance(sub, ms.nn.Cell) or (held is not None and not _plain_tensor(held)) \
                or not _own_code_sets(sub, name):
            continue
        value = np.array(state[key])
        setattr(sub, name, ms.Parameter(ms.Tensor(value), name=key, requires_grad=False))
        created = True
    return created


def _plain_tensor(value) -> bool:
    import mindspore as ms

    return isinstance(value, ms.Tensor) and not isinstance(value, ms.Parameter)


def _own_code_sets(sub, name: str) -> bool:
    """Does a class of ``sub``'s, written by the project (not MindSpore's or mindport's), assign ``self.<name>``?
    Also as the port writes a cache built in forward: ``mp_framework.keep_cache(self, '<name>', ...)``."""
    pattern = re.compile(rf"\bself\.{re.escape(name)}\s*=(?!=)|\bkeep_cache\(self, ['\"]{re.escape(name)}['\"]")
    for klass in type(sub).__mro__:
        module = getattr(klass, "__module__", "") or ""
        if module.split(".")[0] in ("mindspore", "mindport", "builtins", "abc"):
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        if pattern.search(source):
            return True
    return False
