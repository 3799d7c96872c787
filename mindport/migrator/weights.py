"""torch state_dict -> MindSpore Cell parameters / checkpoint files, names mapped from the mapping tables' weight rules.

The converter keeps attribute names, so a torch key ``features.1.running_mean`` names the cell ``features.1``;
the mapping entry of that cell's class says ``running_mean`` is ``moving_mean`` there. Every cell parameter must be
filled exactly once; whatever does not match is reported with the closest candidates by name and shape.

Three layers, each usable alone:

* reading: :func:`load_state_dict` opens ``.pt/.pth/.bin`` (``torch.load(weights_only=True, mmap=True)``: nothing but
  tensors is ever unpickled) and ``.safetensors`` (parsed here, memory-mapped), unwraps ``{"state_dict": ...}``
  and strips DataParallel ``module.`` prefixes. Arrays are zero-copy numpy views of the file.
* planning: :func:`plan_transfer` maps every torch key to a MindSpore parameter (:class:`WeightMap`, JSON for audit).
* writing: :func:`transfer_weights` fills a Cell; :func:`save_weights` / :func:`convert_checkpoint` stream tensors
  straight into ``.ckpt`` (protobuf written field by field) or ``.safetensors``, to a temporary file renamed into
  place, so a failure never leaves a partial output.
"""
from __future__ import annotations

import difflib
import json
import mmap
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mindport.errors import Diagnostic, InputError, MigrationError
from mindport.mappings import load_registry

_WRAPPERS = ("state_dict", "model_state_dict", "model", "module", "net", "network", "params", "weights", "ema")
_STRIPPED_PREFIXES = ("module.", "_orig_mod.")  # DataParallel / DistributedDataParallel, torch.compile
_WHERE = "<weights>"


# ------------------------------------------------------------------------------------------------------ reports

@dataclass
class TransferReport:
    mapping: dict[str, str] = field(default_factory=dict)  # torch key -> MindSpore parameter name
    dropped: list[str] = field(default_factory=list)  # torch keys with no MindSpore counterpart by design
    missing: list[str] = field(default_factory=list)  # MindSpore parameters left unfilled
    unexpected: list[str] = field(default_factory=list)  # torch keys that matched nothing
    diagnostics: list[Diagnostic] = field(default_factory=list)
    weight_map: WeightMap | None = field(default=None, repr=False)  # the plan that was applied

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unexpected and not any(d.severity == "error" for d in self.diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def notices(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity != "error"]


@dataclass
class MapItem:
    """One MindSpore tensor of the output and where it comes from."""

    name: str  # MindSpore parameter name (the checkpoint key)
    sources: tuple[str, ...]  # torch keys (two for a folded weight_norm: g, v)
    shape: tuple[int, ...]  # MindSpore shape
    transform: str = ""  # weight transform name ("" none, "weight_norm" for the g/v fold)
    dtype: str = ""  # cast to this numpy dtype name ("" = keep the source dtype)
    param: object = field(default=None, repr=False, compare=False)  # the Parameter (Cell path only)
    buffer: tuple | None = field(default=None, repr=False, compare=False)  # (cell, buffer name) for buffers


@dataclass
class WeightMap:
    """The plan: every output tensor, plus what was dropped. ``to_json`` is the ``--emit-map`` audit file."""

    items: list[MapItem] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "format": "mindport-weight-map/1",
            "map": {src: item.name for item in self.items if item.buffer is None for src in item.sources},
            "dropped": sorted(self.dropped),
            "tensors": [{"name": item.name, "sources": list(item.sources), "shape": list(item.shape),
                         "transform": item.transform, "dtype": item.dtype}
                        for item in self.items if item.buffer is None],
        }

    @classmethod
    def from_json(cls, data: dict) -> WeightMap:
        if data.get("format") != "mindport-weight-map/1" or not isinstance(data.get("tensors"), list):
            raise InputError("not a mindport weight map (expected the JSON written by --emit-map)")
        items = [MapItem(t["name"], tuple(t["sources"]), tuple(t["shape"]), t.get("transform", ""), t.get("dtype", ""))
                 for t in data["tensors"]]
        return cls(items, list(data.get("dropped", [])))


# ------------------------------------------------------------------------------------------------------ reading

class StateDict(dict):
    """``{torch key: numpy array}``; ``mapped`` is True when the arrays are read-only views of a memory-mapped file."""

    mapped: bool = False
    source: str = "<memory>"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.notices: list[Diagnostic] = []


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
    stripped = 0
    for key, value in obj.items():
        if not isinstance(key, str):
            raise InputError(f"{where}: state_dict key {key!r} is not a string")
        for prefix in _STRIPPED_PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix):]
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


# ----------------------------------------------------------------------------------------------------- planning

def _class_path(cls) -> str:
    module = cls.__module__
    if module.startswith("mindspore.nn") or module.startswith("mindspore.mint.nn"):
        root = "mindspore.mint.nn" if module.startswith("mindspore.mint") else "mindspore.nn"
        return f"{root}.{cls.__name__}"
    return f"{module}.{cls.__name__}"


def _ms_class_path(cell) -> str:
    return _class_path(type(cell))


def layer_entry(registry, cell):
    """The mapping entry whose weight rule applies to ``cell``: its own class's, else the nearest base class's
    (``class GroupNorm32(nn.GroupNorm)`` in user code keeps GroupNorm's parameters, gamma/beta)."""
    for cls in type(cell).__mro__:
        if cls.__module__.startswith("mindspore.nn.cell") or cls is object:
            break
        entry = registry.layer_for_target(_class_path(cls))
        if entry is not None:
            return entry
    return None


def _join(prefix: str, leaf: str) -> str:
    return f"{prefix}.{leaf}" if prefix else leaf


def ms_attribute_name(name: str) -> str:
    """The name a torch module attribute takes on a MindSpore Cell: ``Cell`` itself uses some names torch code
    gives sub-modules (``self.cells = ModuleList(...)`` collides with ``Cell.cells()``: MindSpore refuses the
    assignment), so those get a trailing underscore (``cells_``). One rule for the converter and the weights."""
    from mindspore import nn

    return f"{name}_" if not name.startswith("_") and hasattr(nn.Cell, name) else name


def _cell_paths(cell) -> dict:
    """Every path to every sub-cell. ``cells_and_names`` names a cell held twice (``self.net`` and
    ``self.updater.instance``) once, while torch's state_dict lists it under each path: both must resolve."""
    paths: dict = {}

    def walk(sub, prefix: str, ancestors: frozenset) -> None:
        paths.setdefault(prefix, sub)
        for name, child in sub._cells.items():  # noqa: SLF001 - a Cell's own sub-cells, by attribute name
            if child is not None and id(child) not in ancestors:
                walk(child, _join(prefix, name), ancestors | {id(child)})

    walk(cell, "", frozenset({id(cell)}))
    return paths


class _Target:
    """The MindSpore side of the plan: cells by path, parameters by attribute path and by name, buffers."""

    def __init__(self, cell):
        self.cells = _cell_paths(cell)
        self.by_path = {}
        self.by_name = {}
        for path, param in cell.parameters_and_names():
            self.by_path.setdefault(path, param)
            self.by_name.setdefault(param.name, param)
        for prefix, sub in self.cells.items():  # every path, including the second path of a tied Parameter
            for leaf, param in sub._params.items():  # noqa: SLF001 - a Cell's own parameters, by attribute name
                if param is not None:
                    self.by_path.setdefault(_join(prefix, leaf), param)
        self.buffers = {}
        for prefix, sub in self.cells.items():
            for name in getattr(sub, "_buffers", {}) or {}:
                if sub._buffers[name] is not None:  # noqa: SLF001 - the cell's own buffer table
                    self.buffers[_join(prefix, name)] = (sub, name)
        self.registry = load_registry()

    def rule(self, prefix: str):
        sub = self.cells.get(prefix)
        if sub is None:
            return None
        return layer_entry(self.registry, sub)

    def resolve(self, key: str):
        """torch key -> ("param", Parameter, transform) | ("buffer", (cell, name), "") | ("drop", None, "") | None.
        A path segment MindSpore reserves (``cells``) is also tried under its Cell name (``cells_``)."""
        found = self._resolve(key)
        if found is None:
            renamed = ".".join(ms_attribute_name(part) for part in key.split("."))
            if renamed != key:
                found = self._resolve(renamed)
        return found

    def _resolve(self, key: str):
        prefix, _, leaf = key.rpartition(".")
        entry = self.rule(prefix)
        if entry is not None and leaf in entry.weights:
            ms_leaf = entry.weights[leaf]
            if ms_leaf == "":
                return "drop", None, ""
            param = self.by_path.get(_join(prefix, ms_leaf))
            if param is not None:
                return "param", param, entry.weight_transforms.get(leaf, "")
        param = self.by_path.get(key)
        if param is None and prefix not in self.cells:
            param = self.by_name.get(key)  # a ParameterTuple element, or a name set by hand
        if param is not None:
            return "param", param, entry.weight_transforms.get(leaf, "") if entry is not None else ""
        if key in self.buffers:
            return "buffer", self.buffers[key], ""
        return None


def _apply_name_map(key: str, name_map: dict[str, str]) -> str | None:
    if key in name_map:
        return name_map[key]
    best = max((p for p in name_map if p.endswith(".") and key.startswith(p)), key=len, default=None)
    if best is not None:
        return name_map[best] + key[len(best):]
    return None


_WN_NEW = re.compile(r"^(?P<base>.*)\.parametrizations\.(?P<name>\w+)\.original(?P<i>[01])$")


def _weight_norm_groups(state) -> dict[str, tuple[str, str]]:
    """Folded target key -> (g key, v key) for ``weight_norm`` (old ``X_g``/``X_v`` and new parametrizations)."""
    groups = {}
    for key in state:
        m = _WN_NEW.match(key)
        if m and m["i"] == "0":
            other = f"{m['base']}.parametrizations.{m['name']}.original1"
            if other in state:
                groups[_join(m["base"], m["name"])] = (key, other)
        elif key.endswith("_g") and key[:-2] + "_v" in state:
            groups[key[:-2]] = (key, key[:-2] + "_v")
    return groups


def plan_transfer(state, cell, name_map: dict[str, str] | None = None) -> tuple[WeightMap, TransferReport]:
    """Map every torch key to a MindSpore parameter of ``cell``; nothing is read beyond shapes and dtypes."""
    state = load_state_dict(state)
    target = _Target(cell)
    report = TransferReport(diagnostics=list(state.notices))
    plan = WeightMap()
    name_map = name_map or {}
    filled: dict[int, MapItem] = {}
    shape_errors: set[str] = set()
    consumed: set[str] = set()

    def add(keys: tuple[str, ...], kind, obj, transform: str) -> None:
        src = state[keys[-1]]
        if kind == "buffer":
            sub, bname = obj
            buf = sub._buffers[bname]  # noqa: SLF001
            shape, dtype, name = tuple(buf.shape), _ms_np_dtype(buf.dtype), _join(_path_of(target, sub), bname)
        else:
            shape, dtype, name = tuple(obj.shape), _ms_np_dtype(obj.dtype), obj.name
        src_shape = tuple(src.shape)
        if transform and transform != "weight_norm" and int(np.prod(src_shape)) == int(np.prod(shape)):
            src_shape = shape
        if src_shape != shape:
            report.diagnostics.append(Diagnostic(
                "MP302", f"{keys[-1]}: shape {src_shape} does not fit {name} {shape}", _WHERE, api=keys[-1],
                suggestion="the MindSpore model was built with other sizes (check --ctor), or the key maps to the "
                           "wrong parameter (use --name-map)"))
            shape_errors.update(keys)
            return
        if id(obj) in filled:  # tied weights: the same Parameter reached twice; the values must agree
            first = filled[id(obj)]
            report.mapping.update({k: name for k in keys})
            if not np.array_equal(_gather(state, first), _gather(state, MapItem(name, keys, shape, transform))):
                report.diagnostics.append(Diagnostic(
                    "MP302", f"{keys[-1]} and {first.sources[-1]} both fill the tied parameter {name} but differ",
                    _WHERE, api=keys[-1]))
            return
        cast = ""
        if dtype is not None and dtype != src.dtype:
            cast = str(dtype)
            report.diagnostics.append(Diagnostic(
                "MP304", f"{keys[-1]}: {src.dtype} cast to {dtype} for {name}", _WHERE, api=keys[-1], severity="info"))
        item = MapItem(name, keys, shape, transform, cast, obj if kind == "param" else None,
                       obj if kind == "buffer" else None)
        filled[id(obj)] = item
        plan.items.append(item)
        report.mapping.update({k: name for k in keys})
        if kind == "buffer":
            report.diagnostics.append(Diagnostic(
                "MP304", f"{keys[-1]} fills the MindSpore buffer {name}; checkpoints hold Parameters only, so make it "
                         "Parameter(requires_grad=False) if it must survive save/load", _WHERE, api=keys[-1],
                severity="info"))

    wn_groups = _weight_norm_groups(state)
    for key in state:
        if key in consumed:
            continue
        lookup = key
        mapped = _apply_name_map(key, name_map)
        if mapped == "":
            plan.dropped.append(key)
            report.dropped.append(key)
            continue
        if mapped is not None:
            param = target.by_name.get(mapped)
            if param is None:
                param = target.by_path.get(mapped)
            if param is not None:
                add((key,), "param", param, "")
                continue
            lookup = mapped
        resolved = target.resolve(lookup)
        if resolved is None:
            group = next(((t, g) for t, g in wn_groups.items() if key in g), None)
            if group is not None and target.resolve(group[0]) is not None:
                kind, obj, _ = target.resolve(group[0])
                consumed.update(group[1])
                add(group[1], kind, obj, "weight_norm")
                report.diagnostics.append(Diagnostic(
                    "MP304", f"weight_norm folded: {group[0]} = g * v / ||v|| from {', '.join(group[1])}", _WHERE,
                    api=key, severity="info"))
                continue
            report.unexpected.append(key)
            continue
        kind, obj, transform = resolved
        if kind == "drop":
            plan.dropped.append(key)
            report.dropped.append(key)
            continue
        add((key,), kind, obj, transform)
    filled_ids = set(filled)
    report.missing = [p.name for p in {id(p): p for p in target.by_path.values()}.values() if id(p) not in filled_ids]
    unexpected = [k for k in report.unexpected if k not in shape_errors]
    missing_shapes = {p.name: tuple(p.shape) for p in target.by_path.values() if p.name in report.missing}
    for key in unexpected:
        report.diagnostics.append(Diagnostic(
            "MP301", f"torch key {key} {tuple(state[key].shape)} matches no MindSpore parameter", _WHERE, api=key,
            suggestion=_closest(key, tuple(state[key].shape), missing_shapes, "closest MindSpore parameters")))
    unexpected_shapes = {k: tuple(state[k].shape) for k in report.unexpected}
    for name in report.missing:
        report.diagnostics.append(Diagnostic(
            "MP301", f"MindSpore parameter {name} {missing_shapes[name]} got no torch value (it would keep its random "
                     "initial value)", _WHERE, api=name,
            suggestion=_closest(name, missing_shapes[name], unexpected_shapes, "closest torch keys")))
    return plan, report


def _path_of(target: _Target, sub) -> str:
    return next((p for p, c in target.cells.items() if c is sub), "")


def _ms_np_dtype(ms_dtype):
    text = str(ms_dtype).lower()
    if text == "bfloat16":
        return _bfloat16()
    try:
        return np.dtype({"bool_": "bool"}.get(text, text))
    except TypeError:
        return None


def _closest(name: str, shape: tuple, candidates: dict[str, tuple], label: str) -> str:
    """The three best candidates: name similarity, with a bonus for an equal shape (or equal element count)."""
    def score(other: str) -> float:
        s = difflib.SequenceMatcher(None, name, other).ratio()
        o_shape = candidates[other]
        if o_shape == shape:
            s += 0.5
        elif int(np.prod(o_shape)) == int(np.prod(shape)):
            s += 0.25
        return s

    ranked = sorted(candidates, key=score, reverse=True)[:3]
    ranked = [c for c in ranked if score(c) >= 0.4]
    if not ranked:
        return ""
    return f"{label}: " + ", ".join(f"{c} {candidates[c]}" for c in ranked)


# ---------------------------------------------------------------------------------------------------- applying

def _gather(state, item: MapItem) -> np.ndarray:
    """The output array of one plan item (a view when no transform or cast is needed)."""
    arrays = [state[k] for k in item.sources]
    if item.transform == "weight_norm":
        g, v = (a.astype(np.float32) if a.dtype.itemsize < 4 else a for a in arrays)
        axes = tuple(i for i in range(v.ndim) if g.ndim == 0 or g.shape[i] == 1)
        norm = np.sqrt(np.sum(np.square(v), axis=axes, keepdims=True))
        array = (g * (v / norm)).astype(arrays[1].dtype)
    elif item.transform:
        from mindport.mappings.transforms import WEIGHT_TRANSFORMS

        array = WEIGHT_TRANSFORMS[item.transform](arrays[0], tuple(item.shape))
    else:
        array = arrays[0]
    if item.dtype and str(array.dtype) != item.dtype:
        array = array.astype(_np_dtype(item.dtype))
    if tuple(array.shape) != tuple(item.shape):
        raise MigrationError(f"{item.sources[-1]}: shape {tuple(array.shape)} does not fit {item.name} {item.shape}")
    return array


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


# ------------------------------------------------------------------------------------------------------ writing

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
