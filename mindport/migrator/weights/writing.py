"""Writing checkpoints: tensors streamed straight into ``.ckpt`` (protobuf written field by field) or
``.safetensors``, to a temporary file renamed into place, so a failure never leaves a partial output; the pages of a
memory-mapped source are released as they are written."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mindport.errors import InputError, MigrationError
from mindport.migrator.weights.loading import _ST_CODES, StateDict, _as_numpy, _np_dtype, _release, load_state_dict
from mindport.migrator.weights.plan import _apply_name_map, _gather
from mindport.migrator.weights.report import MapItem, WeightMap

_CKPT_TYPES = {"float16": "Float16", "float32": "Float32", "float64": "Float64", "bfloat16": "BFloat16",
               "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64", "uint8": "UInt8",
               "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64", "bool": "Bool"}
_CKPT_SLICE = 512 * 1024 * 1024  # MindSpore's own slice size: load_checkpoint joins slices that share a tag
_CHUNK = 16 * 1024 * 1024  # write (and release) mapped sources in pieces of this size


@dataclass
class _Out:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    produce: object  # () -> np.ndarray
    release: bool = False  # the array is a view of a mapped file: drop its pages once written


def _output_format(path: Path) -> str:
    if path.suffix not in (".ckpt", ".safetensors"):
        raise InputError(f"output {path}: the name must end in .ckpt or .safetensors")
    return path.suffix[1:]


def _atomic_write(path, outs: list[_Out], overwrite: bool) -> Path:
    path = Path(path)
    fmt = _output_format(path)
    if path.exists() and not overwrite:
        raise InputError(f"{path} exists; pass --force (overwrite=True) to replace it")
    if not path.parent.is_dir():
        raise InputError(f"output folder {path.parent} does not exist")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            (_write_ckpt if fmt == "ckpt" else _write_safetensors)(f, outs)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _dtype_name(dtype: np.dtype) -> str:
    name = str(dtype)
    if name not in _CKPT_TYPES:
        raise InputError(f"dtype {name} cannot be stored in a MindSpore checkpoint")
    return name


def _write_bytes(f, array: np.ndarray, release: bool) -> None:
    flat = np.ascontiguousarray(array).reshape(-1)
    raw = flat.view(np.uint8) if flat.size else np.zeros(0, np.uint8)
    for start in range(0, raw.size, _CHUNK):
        piece = raw[start:start + _CHUNK]
        f.write(memoryview(piece))
        if release:
            _release(piece)


def _write_safetensors(f, outs: list[_Out]) -> None:
    header, offset = {}, 0
    for out in outs:
        nbytes = int(np.prod(out.shape, dtype=np.int64)) * out.dtype.itemsize
        header[out.name] = {"dtype": _ST_CODES[_dtype_name(out.dtype)], "shape": list(out.shape),
                            "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    header["__metadata__"] = {"format": "np", "producer": "mindport"}
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    f.write(len(blob).to_bytes(8, "little"))
    f.write(blob)
    for out in outs:
        array = out.produce()
        _check_out(out, array)
        _write_bytes(f, array, out.release)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload_len: int) -> bytes:
    """A length-delimited protobuf field header (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(payload_len)


def _write_ckpt(f, outs: list[_Out]) -> None:
    """MindSpore's checkpoint.proto, written field by field so a tensor's bytes go straight from the source:
    ``Checkpoint{repeated Value value=1}``, ``Value{string tag=1; TensorProto tensor=2}``,
    ``TensorProto{repeated int64 dims=1; string tensor_type=2; bytes tensor_content=3}``."""
    for out in outs:
        array = out.produce()
        _check_out(out, array)
        flat = np.ascontiguousarray(array).reshape(-1)
        raw = flat.view(np.uint8) if flat.size else np.zeros(0, np.uint8)
        tag = out.name.encode()
        dims = b"".join(_varint(0x08) + _varint(d) for d in out.shape)
        ttype = _CKPT_TYPES[_dtype_name(out.dtype)].encode()
        for start in range(0, max(raw.size, 1), _CKPT_SLICE):
            piece = raw[start:start + _CKPT_SLICE]
            tensor_len = len(dims) + len(_field(2, len(ttype))) + len(ttype) + len(_field(3, piece.size)) + piece.size
            value_len = len(_field(1, len(tag))) + len(tag) + len(_field(2, tensor_len)) + tensor_len
            f.write(_field(1, value_len) + _field(1, len(tag)) + tag + _field(2, tensor_len) + dims
                    + _field(2, len(ttype)) + ttype + _field(3, piece.size))
            _write_bytes(f, piece, out.release)


def _check_out(out: _Out, array: np.ndarray) -> None:
    if tuple(array.shape) != tuple(out.shape) or array.dtype != out.dtype:
        raise MigrationError(f"{out.name}: produced {array.dtype}{tuple(array.shape)}, planned {out.dtype}{out.shape}")


def _plan_outs(state: StateDict, plan: WeightMap) -> list[_Out]:
    outs = []
    for item in plan.items:
        if item.buffer is not None:
            continue
        missing = [k for k in item.sources if k not in state]
        if missing:
            raise InputError(f"the weight map names torch keys the checkpoint lacks: {', '.join(missing)}")
        src = state[item.sources[-1]]
        dtype = _np_dtype(item.dtype) if item.dtype else src.dtype
        release = state.mapped and not item.transform and not item.dtype
        outs.append(_Out(item.name, tuple(item.shape), dtype, (lambda it=item: _gather(state, it)), release))
    names = [o.name for o in outs]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InputError(f"two torch keys map to the same MindSpore name: {', '.join(dup)}")
    return outs


def save_weights(cell_or_params, path, *, overwrite: bool = True) -> Path:
    """Write a Cell's parameters (or ``{name: array/Tensor/Parameter}``) to ``.ckpt`` or ``.safetensors``.

    Written to a temporary file in the same folder and renamed into place: a failure leaves no partial file.
    Readable by ``mindspore.load_checkpoint`` (``format='safetensors'`` for the latter) and ``load_param_into_net``.
    """
    if hasattr(cell_or_params, "parameters_and_names"):
        seen, pairs = set(), []
        for _, param in cell_or_params.parameters_and_names():
            if id(param) not in seen:
                seen.add(id(param))
                pairs.append((param.name, param))
    elif isinstance(cell_or_params, dict):
        pairs = list(cell_or_params.items())
    else:
        raise InputError(f"save_weights takes a Cell or a dict of arrays, not {type(cell_or_params).__name__}")
    outs = []
    for name, value in pairs:
        array = _as_numpy(value)
        if array is None:
            raise InputError(f"save_weights: {name} is a {type(value).__name__}, not an array or tensor")
        outs.append(_Out(name, tuple(array.shape), array.dtype, (lambda a=array: a)))
    return _atomic_write(path, outs, overwrite)


def write_weights(state, plan: WeightMap, path, *, overwrite: bool = True) -> Path:
    """Stream the planned tensors from ``state`` (a path or a loaded state_dict) into ``path`` (no Cell needed)."""
    state = load_state_dict(state)
    return _atomic_write(path, _plan_outs(state, plan), overwrite)


def convert_checkpoint(src, dst, name_map: dict[str, str] | WeightMap | None = None, *, overwrite: bool = True
                       ) -> WeightMap:
    """torch checkpoint -> MindSpore ``.ckpt``/``.safetensors`` without building a Cell, streaming tensor by tensor.

    ``name_map`` is either a :class:`WeightMap` (from ``plan_transfer`` or an ``--emit-map`` file: exact names,
    transforms and shapes) or ``{torch key or prefix.: MindSpore name}`` (``""`` drops; unlisted keys keep their
    name). Peak memory stays near one chunk: the source is memory-mapped and its pages are released as written.
    """
    state = load_state_dict(src)
    if isinstance(name_map, WeightMap):
        plan = name_map
    else:
        plan = WeightMap()
        for key, array in state.items():
            name = _apply_name_map(key, name_map or {})
            if name == "":
                plan.dropped.append(key)
                continue
            plan.items.append(MapItem(name or key, (key,), tuple(array.shape)))
    write_weights(state, plan, dst, overwrite=overwrite)
    return plan
