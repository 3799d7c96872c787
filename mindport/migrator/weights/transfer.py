"""Filling a Cell: the planned tensors gathered from the state_dict, cast and transformed, set on the Cell's
parameters (``transfer_weights``)."""
from __future__ import annotations

import numpy as np

from mindport.errors import MigrationError
from mindport.migrator.weights.loading import _release, load_state_dict
from mindport.migrator.weights.plan import _gather, plan_transfer
from mindport.migrator.weights.report import TransferReport


def transfer_weights(state_dict_or_path, cell, *, strict: bool = True, name_map: dict[str, str] | None = None
                     ) -> TransferReport:
    """Fill ``cell`` in place from a torch state_dict (or a module, or a checkpoint path).

    Raises :class:`MigrationError` naming every unmatched key (with the closest candidates) when ``strict`` and
    anything is unmatched; with ``strict=False`` it fills what matches and the report lists the rest.
    """
    import mindspore as ms

    state = load_state_dict(state_dict_or_path)
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
