"""Reading checkpoints safely: ``.pt/.pth/.bin`` through ``torch.load(weights_only=True, mmap=True)`` (nothing but
tensors is ever unpickled) and ``.safetensors`` (parsed here, memory-mapped); ``{"state_dict": ...}`` unwrapped and
DataParallel ``module.`` prefixes stripped. Arrays are zero-copy numpy views of the file, whose pages are released
once used (``_release``)."""
from __future__ import annotations

import json
import mmap
import os
import tomllib
from pathlib import Path

import numpy as np

from mindport.errors import Diagnostic, InputError

_WRAPPERS = ("state_dict", "model_state_dict", "model", "module", "net", "network", "params", "weights", "ema")
_STRIPPED_PREFIXES = ("module.", "_orig_mod.")  # DataParallel / DistributedDataParallel, torch.compile


class StateDict(dict):
    """``{torch key: numpy array}``; ``mapped`` is True when the arrays are read-only views of a memory-mapped file."""

    mapped: bool = False
    source: str = "<memory>"
    stripped: str = ""  # the wrapper prefix taken off every key ("module.", "_orig_mod.", or both in order)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.notices: list[Diagnostic] = []

    def with_prefix_back(self) -> StateDict:
        """The keys as the checkpoint wrote them: the model's own top-level attribute was named ``module`` (a
        deepspeech ``SequenceWise(module)``), not a DataParallel wrapper."""
        state = StateDict((self.stripped + key, value) for key, value in self.items())
        state.mapped, state.source, state.notices = self.mapped, self.source, [
            n for n in self.notices if "prefixes from" not in n.message]
        return state


def for_model(state: StateDict, names) -> StateDict:
    """``state`` for a model whose own parameter names are ``names``: the wrapper prefix put back when more keys then
    start with one of the model's top-level children (its own child is named ``module``: deepspeech's
    ``SequenceWise(module)``, every key starting with ``module.`` was no DataParallel's; a DataParallel checkpoint of
    that model, ``module.module.*``, keeps one prefix off), else ``state`` itself."""
    if not state.stripped:
        return state
    tops = {name.split(".", 1)[0] for name in names}
    back = state.with_prefix_back()
    fits = lambda keys: sum(key.split(".", 1)[0] in tops for key in keys)  # noqa: E731
    return back if fits(back) > fits(state) else state


def load_state_dict(source) -> StateDict:
    """A torch state_dict (in memory, ``.pt/.pth/.bin`` or ``.safetensors``) as numpy arrays, loaded safely.

    Files are memory-mapped where the format allows; the arrays are views, not copies.
    """
    if isinstance(source, StateDict):
        return source
    if isinstance(source, dict):
        return _normalise(source, "<memory>", mapped=False)
    if hasattr(source, "state_dict") and callable(source.state_dict) and not isinstance(source, (str, os.PathLike)):
        return _normalise(source.state_dict(), "<memory>", mapped=False)
    path = Path(source)
    if not path.is_file():
        raise InputError(f"checkpoint {path} does not exist")
    kind = _sniff(path)
    if kind == "safetensors":
        return _read_safetensors(path)
    return _read_torch(path, kind)


def _sniff(path: Path) -> str:
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(16)
    if size == 0:
        raise InputError(f"{path}: the file is empty")
    if head[:4] == b"PK\x03\x04":
        return "torch-zip"
    if len(head) >= 9 and head[8:9] == b"{" and 2 <= int.from_bytes(head[:8], "little") <= size - 8:
        return "safetensors"
    if head[:1] == b"\x80":
        return "torch-legacy"
    if path.suffix == ".ckpt":
        raise InputError(f"{path}: looks like a MindSpore checkpoint already; give the torch .pt/.pth/.bin or .safetensors file")
    raise InputError(f"{path}: not a torch checkpoint (.pt/.pth/.bin zip or legacy pickle) nor a safetensors file "
                     f"(it starts with {head[:8]!r})")


def _read_torch(path: Path, kind: str) -> StateDict:
    import pickle

    import torch

    try:
        obj = torch.load(str(path), map_location="cpu", weights_only=True, mmap=kind == "torch-zip")
    except pickle.UnpicklingError as exc:
        if "Weights only load failed" in str(exc):
            raise InputError(
                f"{path} holds more than tensors (a pickled model object?); mindport never unpickles objects. "
                "Save a state_dict instead: torch.save(model.state_dict(), 'model.pt')") from None
        raise InputError(f"{path}: corrupt torch checkpoint ({exc})") from None
    except Exception as exc:  # zip reader errors (truncated / corrupt archives) are RuntimeErrors
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{path}: truncated or corrupt torch checkpoint ({text})") from None
    return _normalise(obj, str(path), mapped=kind == "torch-zip")


def _normalise(obj, where: str, mapped: bool) -> StateDict:
    """Unwrap ``{"state_dict": ...}``-style wrappers, strip DataParallel prefixes, convert tensors to numpy."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: holds a {type(obj).__name__}, not a state_dict (a dict of tensors). "
                         "Save one with torch.save(model.state_dict(), 'model.pt')")
    trail = []
    while not _all_tensors(obj):
        inner = next((k for k in _WRAPPERS if isinstance(obj.get(k), dict)), None)
        if inner is None:
            dicts = [k for k, v in obj.items() if isinstance(v, dict)]
            if dicts:
                raise InputError(f"{where}: a dict of dicts ({', '.join(map(str, dicts[:6]))}) with no state_dict/model "
                                 "entry; pass the inner state_dict")
            break
        trail.append(inner)
        obj = obj[inner]
    state = StateDict()
    state.mapped, state.source = mapped, where
    if trail:
        state.notices.append(Diagnostic("MP303", f"unwrapped {'/'.join(trail)} from the checkpoint", where, severity="info"))
    # a wrapper (DataParallel, DistributedDataParallel, torch.compile) prefixes every key: a prefix some keys lack is
    # the model's own attribute (a child named ``module`` beside others), kept; plan_transfer puts one back when the
    # MindSpore model's own names start with it
    keys = [k for k in obj if isinstance(k, str)]
    for prefix in _STRIPPED_PREFIXES:
        if keys and all(k.startswith(state.stripped + prefix) for k in keys):
            state.stripped += prefix
    stripped = 0
    for key, value in obj.items():
        if not isinstance(key, str):
            raise InputError(f"{where}: state_dict key {key!r} is not a string")
        if state.stripped:
            key = key[len(state.stripped):]
            stripped += 1
        array = _as_numpy(value)
        if array is None:
            state.notices.append(Diagnostic("MP303", f"{key}: a {type(value).__name__}, not a tensor; skipped", where,
                                            api=key, severity="warning"))
            continue
        if key in state:
            raise InputError(f"{where}: key {key} appears twice once the module./_orig_mod. prefixes are stripped")
        state[key] = array
    if stripped:
        state.notices.append(Diagnostic("MP303", f"stripped DataParallel/compile prefixes from {stripped} keys", where,
                                        severity="info"))
    return state


def _all_tensors(obj: dict) -> bool:
    return all(_is_tensor(v) for v in obj.values())


def _is_tensor(value) -> bool:
    return isinstance(value, np.ndarray) or hasattr(value, "detach") or hasattr(value, "asnumpy")


def _as_numpy(value):
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):  # torch.Tensor: a zero-copy view (of the mmap, for files)
        import torch

        t = value.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.layout != torch.strided:  # a sparse COO/CSR tensor (KGAT's adjacency Parameter): its dense values, as
            t = t.to_dense()  # a port keeps sparse tensors dense (torch.Tensor.to_sparse's mapping entry)
        if not t.is_contiguous():
            t = t.contiguous()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(_bfloat16())
        return t.numpy()
    if hasattr(value, "asnumpy"):  # a MindSpore Tensor/Parameter
        return value.asnumpy()
    return None


def _bfloat16():
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


_ST_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
              "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "U16": "uint16", "U32": "uint32",
              "U64": "uint64", "BOOL": "bool"}
_ST_CODES = {v: k for k, v in _ST_DTYPES.items()}


def _np_dtype(name: str) -> np.dtype:
    return _bfloat16() if name == "bfloat16" else np.dtype(name)


def _read_safetensors(path: Path) -> StateDict:
    size = path.stat().st_size
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        try:
            header = json.loads(f.read(n))
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: corrupt safetensors header ({exc})") from None
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if not isinstance(header, dict):
        raise InputError(f"{path}: corrupt safetensors header (not a JSON object)")
    base = 8 + n
    state = StateDict()
    state.mapped, state.source = True, str(path)
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = _np_dtype(_ST_DTYPES[info["dtype"]])
            shape = tuple(int(d) for d in info["shape"])
            start, end = (int(v) for v in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{path}: corrupt safetensors entry for {name}: {info!r:.100}") from None
        count = int(np.prod(shape, dtype=np.int64))
        if end - start != count * dtype.itemsize or start < 0:
            raise InputError(f"{path}: corrupt safetensors entry for {name} ({end - start} bytes for shape {shape})")
        if base + end > size:
            raise InputError(f"{path}: truncated safetensors file ({name} ends at byte {base + end}, file has {size})")
        state[name] = np.frombuffer(mm, dtype=dtype, count=count, offset=base + start).reshape(shape)
    return state


def read_name_map(path) -> dict[str, str]:
    """A user name map from JSON or TOML (data only, never executed): ``{torch key or prefix.: MindSpore name}``.

    Keys ending in ``.`` rename a prefix (``"encoder." = "backbone."``); a value ``""`` drops the key. A weight map
    written by ``--emit-map`` is accepted too (its ``map`` table is used).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"name map {path} does not exist")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"name map {path}: not valid {'TOML' if path.suffix == '.toml' else 'JSON'} ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("map"), dict):
        data = data["map"]
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError(f"name map {path}: expected a table of strings {{torch key: MindSpore name}}")
    return dict(data)


_MADV_DONTNEED = 4


def _release(array: np.ndarray) -> None:
    """Drop the resident pages of a view of a read-only file mapping (they are re-read from the file if touched
    again), so streaming a checkpoint keeps the peak RSS near one chunk instead of the whole file."""
    global _LIBC
    if array.nbytes < mmap.PAGESIZE:
        return
    try:
        if _LIBC is None:
            import ctypes

            _LIBC = ctypes.CDLL(None, use_errno=True)
            _LIBC.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        addr = array.ctypes.data
        start = -(-addr // mmap.PAGESIZE) * mmap.PAGESIZE  # only whole pages inside the array
        end = (addr + array.nbytes) // mmap.PAGESIZE * mmap.PAGESIZE
        if end > start:
            _LIBC.madvise(start, end - start, _MADV_DONTNEED)
    except (OSError, AttributeError):  # not Linux/glibc: nothing to release, only a higher peak
        _LIBC = False


_LIBC = None
