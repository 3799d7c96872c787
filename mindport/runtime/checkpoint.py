"""torch.save / torch.load as training scripts use them, on MindSpore.

``mindspore.save_checkpoint`` writes a flat table of named tensors and appends ``.ckpt`` to any other file name
(``"model.pth"`` becomes ``model.pth.ckpt``), and ``load_checkpoint`` rejects a name without that suffix; it cannot
write the checkpoint dictionaries scripts save (``{"epoch": 3, "model": model.state_dict(), "optimizer":
optimizer.state_dict(), "loss": 0.4}``: an UnboundLocalError inside MindSpore 2.10). torch saves any picklable object at
exactly the path given and loads it back from there. So:

* ``save(obj, f)``: a Cell or a flat ``{name: tensor}`` table (``model.state_dict()``) is MindSpore's own checkpoint
  (``save_checkpoint``, its ``.ckpt`` name); anything else is pickled at exactly ``f``, its tensors as numpy arrays
  (Parameters keep their name and ``requires_grad``). A file object always takes the pickle, a whole Cell included
  (``with open(path, 'wb') as f: torch.save(model, f)``, pytorch/examples' language models): its primitives
  (``Dropout``, ``Reshape``: C++ objects pickle refuses) are pickled as their class and the arguments they were made
  with (``init_attrs``), so ``load`` gives back a working Cell with the saved weights, as torch gives the module.
* ``load(f)`` reads what ``save`` wrote, whichever form: ``f`` itself or MindSpore's ``f + ".ckpt"``; a MindSpore
  checkpoint gives ``{name: Parameter}`` as ``load_checkpoint`` does, a pickle gives its object with MindSpore tensors
  back. A file torch wrote (its zip archive: a state_dict, a checkpoint dictionary, a data tensor) is read without
  torch into MindSpore tensors; one holding other objects (a pickled nn.Module) is refused with the way to convert it
  (``mindport weights``).

The choice rests on the object at run time (save) and on the file's content (load): a runtime helper by the rule
(docs/architecture.md: runtime only where torch's semantics need a run-time decision).
"""
from __future__ import annotations

import io
import os
import pickle
import shutil
import tempfile
import types
from collections.abc import Mapping
from pathlib import Path

import mindspore as ms
import numpy as np

from mindport.runtime._graph import host_only

_SUFFIX = ".ckpt"


def _host_only(what: str) -> None:
    host_only(f"{what} reads and writes files in Python: call it outside construct/@jit")


class _Saved:
    """A tensor inside a pickled object: its values, and the Parameter's name and flag if it was one."""

    def __init__(self, array: np.ndarray, name: str | None, requires_grad: bool | None) -> None:
        self.array, self.name, self.requires_grad = array, name, requires_grad


def _tensor(array: np.ndarray, name: str | None, requires_grad: bool | None):
    tensor = ms.Tensor(array)
    return tensor if name is None else ms.Parameter(tensor, name=name, requires_grad=requires_grad)


def _primitive(cls, attrs: dict):
    return cls(**attrs)


def _bound(func, obj):
    return types.MethodType(func, obj)


class _Pickler(pickle.Pickler):
    """pickle's Pickler, with MindSpore's objects inside any object (a whole Cell's attributes) made picklable:
    tensors as numpy arrays (Parameters with their name and flag), primitives as their class and init arguments."""

    def reducer_override(self, obj):
        if isinstance(obj, ms.Parameter):
            return _tensor, (obj.asnumpy(), obj.name, obj.requires_grad)
        if isinstance(obj, ms.Tensor):
            return _tensor, (obj.asnumpy(), None, None)
        if isinstance(obj, ms.ops.Primitive) and isinstance(getattr(obj, "init_attrs", None), dict):
            return _primitive, (type(obj), dict(obj.init_attrs))
        if isinstance(obj, types.MethodType) and getattr(type(obj.__self__), obj.__func__.__name__, None) \
                is not obj.__func__:
            # a function bound on the instance itself (mindport.runtime.training's Dropout keeping its masks sets
            # its construct so): pickle's own form looks the name up on the object when loading, where it is none
            return _bound, (obj.__func__, obj.__self__)
        return NotImplemented


def _dump(obj, f, module, protocol: int) -> None:
    if module is pickle:
        _Pickler(f, protocol=protocol).dump(obj)
    else:
        module.dump(obj, f, protocol=protocol)


def _flat_table(obj) -> bool:
    if isinstance(obj, ms.nn.Cell):
        return True
    return isinstance(obj, Mapping) and bool(obj) and all(
        isinstance(k, str) and isinstance(v, ms.Tensor) for k, v in obj.items())


def _pack(obj):
    if isinstance(obj, ms.Parameter):
        return _Saved(obj.asnumpy(), obj.name, obj.requires_grad)
    if isinstance(obj, ms.Tensor):
        return _Saved(obj.asnumpy(), None, None)
    if isinstance(obj, Mapping):
        return type(obj)((k, _pack(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(_pack(v) for v in obj)
    return obj


def _unpack(obj):
    if isinstance(obj, _Saved):
        tensor = ms.Tensor(obj.array)
        return tensor if obj.name is None else ms.Parameter(tensor, name=obj.name, requires_grad=obj.requires_grad)
    if isinstance(obj, Mapping):
        return type(obj)((k, _unpack(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(_unpack(v) for v in obj)
    return obj


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """torch.save: MindSpore's checkpoint for a Cell or a flat name -> tensor table, a pickle at exactly ``f``
    for anything else (see the module's docs)."""
    _host_only("torch.save")
    module = pickle if pickle_module is None else pickle_module
    if not isinstance(f, (str, os.PathLike)):  # a file object (io.BytesIO, an open file): always the pickle
        _dump(_pack(obj), f, module, max(pickle_protocol, 2))
        return
    path = os.fspath(f)
    if _flat_table(obj):
        ms.save_checkpoint(obj, path)
        return
    buffer = io.BytesIO()
    _dump(_pack(obj), buffer, module, max(pickle_protocol, 2))
    Path(path).write_bytes(buffer.getvalue())


def _torch_file(head: bytes) -> bool:
    return head[:2] == b"PK"  # torch's zip archive (the legacy format starts with a pickle of torch's magic number)


class _NotTensorData(Exception):
    """A torch archive holding an object other than tensors in containers (a pickled nn.Module, a class of the
    script's): only torch can rebuild it."""


_STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
             "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8,
             "ByteStorage": np.uint8, "BoolStorage": np.bool_}


class _StorageType:
    def __init__(self, dtype) -> None:
        self.dtype = dtype


def _rebuild_tensor(storage, offset, size, stride, *_rest):
    """torch._utils._rebuild_tensor_v2: the tensor's view (offset, size, stride in elements) of its storage."""
    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size),
                                           strides=tuple(item * s for s in stride)) if size else storage[offset]
    return ms.Tensor(np.array(view))


def _rebuild_parameter(data, requires_grad, *_rest):
    return ms.Parameter(data, requires_grad=requires_grad)


class _TorchUnpickler(pickle.Unpickler):
    """Reads torch's archive without torch: storages are the archive's raw records in their dtype, tensors numpy
    views of them made MindSpore tensors; builtins and collections as pickle has them; any other class refused."""

    _TORCH = {("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor, ("torch._utils", "_rebuild_tensor"):
              _rebuild_tensor, ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
              ("collections", "OrderedDict"): __import__("collections").OrderedDict}

    def __init__(self, file, records) -> None:
        super().__init__(file)
        self.records, self.storages = records, {}

    def find_class(self, module, name):
        if (module, name) in self._TORCH:
            return self._TORCH[(module, name)]
        if module == "torch" and name in _STORAGES:
            return _StorageType(_STORAGES[name])
        if module == "builtins" and name in {"set", "frozenset", "slice", "complex", "range", "bytearray"}:
            return super().find_class(module, name)
        raise _NotTensorData(f"{module}.{name}")

    def persistent_load(self, pid):
        kind, storage_type, key, _location, _numel = pid
        if kind != "storage" or not isinstance(storage_type, _StorageType):
            raise _NotTensorData(f"a {storage_type!r} storage")
        if key not in self.storages:
            self.storages[key] = np.frombuffer(self.records(f"data/{key}"), dtype=storage_type.dtype)
        return self.storages[key]


def _read_torch_zip(data: bytes):
    """torch.save's zip archive (``<name>/data.pkl``, ``<name>/data/<key>`` records, little-endian): its object with
    MindSpore tensors, read without torch (a converted program loads the files its torch original wrote)."""
    import zipfile

    archive = zipfile.ZipFile(io.BytesIO(data))
    pkl = next(n for n in archive.namelist() if n.endswith("data.pkl"))
    prefix = pkl[: -len("data.pkl")]
    order = prefix + "byteorder"
    if order in archive.namelist() and archive.read(order).decode().strip() != "little":
        raise _NotTensorData("big-endian records")
    return _TorchUnpickler(io.BytesIO(archive.read(pkl)), lambda rel: archive.read(prefix + rel)).load()


def _read_torch_file(data: bytes, path: str):
    """A torch.save file's object, or one message saying how to convert what it holds that is not tensor data. (Its
    own function: MindSpore's graph parser refuses a ``try`` in :func:`load` before its host-only guard can speak.)"""
    try:
        return _read_torch_zip(data)
    except _NotTensorData as e:
        raise ValueError(f"mindport: {path!r} was written by torch and holds {e} (not tensors, numbers, "
                         f"containers): convert it once with `mindport weights {path} -o "
                         f"{os.path.splitext(path)[0]}.ckpt` and load that") from None


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """torch.load: what :func:`save` wrote at ``f`` (or MindSpore's ``f + '.ckpt'``), in MindSpore tensors."""
    _host_only("torch.load")
    module = pickle if pickle_module is None else pickle_module
    if not isinstance(f, (str, os.PathLike)):
        return _unpack(module.load(f, **pickle_load_args))
    path = os.fspath(f)
    if not os.path.exists(path) and not path.endswith(_SUFFIX) and os.path.exists(path + _SUFFIX):
        path += _SUFFIX  # save_checkpoint's name for it
    if not os.path.exists(path):
        raise OSError(f"mindport: no checkpoint at {os.fspath(f)!r} (nor {os.fspath(f) + _SUFFIX!r})")
    data = Path(path).read_bytes()
    if _torch_file(data[:2]):
        return _read_torch_file(data, path)
    if data[:1] == b"\x80":  # a pickle protocol >= 2: an object save() pickled
        return _unpack(module.load(io.BytesIO(data), **pickle_load_args))
    if path.endswith(_SUFFIX):
        return ms.load_checkpoint(path)
    return _load_renamed(path)


def _load_renamed(path: str):
    """A MindSpore checkpoint under a name without .ckpt, which load_checkpoint refuses: read from a copy named so."""
    folder = tempfile.mkdtemp(prefix="mindport-ckpt-")  # (no `with`: MindSpore's graph parser follows this call)
    named = os.path.join(folder, os.path.basename(path) + _SUFFIX)
    shutil.copyfile(path, named)
    table = ms.load_checkpoint(named)
    shutil.rmtree(folder, ignore_errors=True)
    return table
