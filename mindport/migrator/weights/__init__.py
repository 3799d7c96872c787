"""torch state_dict -> MindSpore Cell parameters / checkpoint files, names mapped from the mapping tables' weight rules.

The converter keeps attribute names, so a torch key ``features.1.running_mean`` names the cell ``features.1``;
the mapping entry of that cell's class says ``running_mean`` is ``moving_mean`` there. Every cell parameter must be
filled exactly once; whatever does not match is reported with the closest candidates by name and shape.

Three layers, each usable alone, one module each (``report.py`` holds what they return):

* reading (``loading.py``): :func:`load_state_dict` opens ``.pt/.pth/.bin`` (``torch.load(weights_only=True,
  mmap=True)``: nothing but tensors is ever unpickled) and ``.safetensors`` (parsed here, memory-mapped), unwraps
  ``{"state_dict": ...}`` and strips DataParallel ``module.`` prefixes. Arrays are zero-copy numpy views of the file.
* planning (``plan.py``): :func:`plan_transfer` maps every torch key to a MindSpore parameter (:class:`WeightMap`,
  JSON for audit).
* writing: :func:`transfer_weights` fills a Cell (``transfer.py``); :func:`save_weights` / :func:`convert_checkpoint`
  (``writing.py``) stream tensors straight into ``.ckpt`` (protobuf written field by field) or ``.safetensors``, to a
  temporary file renamed into place, so a failure never leaves a partial output.

This package's names below are its public API; the modules hold the implementations.
"""
from mindport.migrator.weights.loading import StateDict, load_state_dict, read_name_map
from mindport.migrator.weights.plan import ms_attribute_name, plan_transfer
from mindport.migrator.weights.report import MapItem, TransferReport, WeightMap
from mindport.migrator.weights.transfer import transfer_weights
from mindport.migrator.weights.writing import convert_checkpoint, save_weights, write_weights

__all__ = ["StateDict", "load_state_dict", "read_name_map", "ms_attribute_name", "plan_transfer", "MapItem",
           "TransferReport", "WeightMap", "transfer_weights", "convert_checkpoint", "save_weights", "write_weights"]
