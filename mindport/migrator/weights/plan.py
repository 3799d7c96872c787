"""Name mapping: every torch key to the MindSpore parameter it fills, from the cell paths the converter kept and the
mapping entries' weight rules (``plan_transfer``); whatever does not match is reported with the closest candidates by
name and shape."""
from __future__ import annotations

import difflib
import re

import numpy as np

from mindport.errors import Diagnostic, MigrationError
from mindport.mappings import load_registry
from mindport.migrator.weights.loading import _bfloat16, _np_dtype, for_model, load_state_dict
from mindport.migrator.weights.report import MapItem, TransferReport, WeightMap
from mindport.names import cell_attribute_name

_WHERE = "<weights>"


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
    assignment), so those get a trailing underscore (``cells_``). One rule for the converter and the weights:
    :func:`mindport.names.cell_attribute_name`."""
    return cell_attribute_name(name)


def _cell_paths(cell, held: dict | None = None) -> dict:
    """Every path to every sub-cell. ``cells_and_names`` names a cell held twice (``self.net`` and
    ``self.updater.instance``) once, while torch's state_dict lists it under each path: both must resolve.
    ``held``: the cell's :func:`_held` members when the caller has them already."""
    paths: dict = {}

    def walk(sub, prefix: str, ancestors: frozenset) -> None:
        paths.setdefault(prefix, sub)
        for name, child in sub._cells.items():  # noqa: SLF001 - a Cell's own sub-cells, by attribute name
            if child is not None and id(child) not in ancestors:
                walk(child, _join(prefix, name), ancestors | {id(child)})

    walk(cell, "", frozenset({id(cell)}))
    # a module torch runs but does not register: under torch's path too
    for where, member in (_held(cell) if held is None else held).items():
        walk(member, where, frozenset({id(member)}))
    return paths


def _held(cell) -> dict:
    """path -> Cell of each module the model holds in a plain list, tuple or dict (mindport.runtime.held_members):
    not among the Cell's parameters, as torch's are not in its state_dict; the proof's torch side hands their
    tensors under these paths (validators.parity.side_torch), and a checkpoint never has them."""
    from mindspore import nn

    from mindport.runtime.held_members import unregistered_members

    return unregistered_members(cell, nn.Cell, lambda c: c.cells_and_names())


class _Target:
    """The MindSpore side of the plan: cells by path, parameters by attribute path and by name, buffers."""

    def __init__(self, cell):
        import mindspore.nn as msnn
        from mindspore.experimental import optim as ms_optim

        held = _held(cell)
        self.cells = _cell_paths(cell, held)
        # an optimizer the model holds (``self.optimizer = optim.Adam(self.parameters())``, common in RL code) is a
        # Cell in MindSpore: its moments are Parameters, but no model weights (torch's state_dict has none of them);
        # converted code holds mindspore.experimental.optim's (mindport.runtime.optim.Adam derives from its AdamW)
        kinds = (msnn.Optimizer, ms_optim.Optimizer)
        optimizers = tuple(p + "." for p, c in self.cells.items() if p and isinstance(c, kinds))
        self.by_path = {}
        self.by_name = {}
        for path, param in cell.parameters_and_names():
            if not path.startswith(optimizers):
                self.by_path.setdefault(path, param)
                self.by_name.setdefault(param.name, param)
        for prefix, sub in self.cells.items():  # every path, including the second path of a tied Parameter
            if (prefix + ".").startswith(optimizers):
                continue
            for leaf, param in sub._params.items():  # noqa: SLF001 - a Cell's own parameters, by attribute name
                if param is not None:
                    self.by_path.setdefault(_join(prefix, leaf), param)
        self.unread = _unread_parameters(self.cells)
        self.held = {id(param): where for where, member in held.items()
                     for _, param in member.parameters_and_names()}  # Parameters of unregistered members
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
            if ms_leaf == "":  # torch's state MindSpore's layer has no place for, unless this one keeps it
                param = self.by_path.get(key)  # (mindport.runtime.layers.CumulativeBatchNorm*: num_batches_tracked)
                return ("param", param, "") if param is not None else ("drop", None, "")
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
    state = for_model(load_state_dict(state), (name for name, _ in cell.parameters_and_names()))
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
        if not transform and len(src_shape) == 3 and shape == src_shape[:2] + (1,) + src_shape[2:]:
            # MindSpore's Conv1d keeps its weight 4-D, (out, in/groups, 1, k): the one layout that puts a size-1 axis
            # 2 into a 3-D torch tensor. A Conv1d's weight held under a name of the model's own (TrellisNet's
            # ``self.weight1 = conv1.weight``, then its own weight norm's ``weight1_g``/``weight1_v`` from it) is not
            # the layer's entry, which reshapes it; it is reshaped the same way.
            transform = "conv1d_reshape"
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
    report.missing = [p.name for p in {id(p): p for p in target.by_path.values()}.values()
                      if id(p) not in filled_ids and id(p) not in target.unread and id(p) not in target.held]
    unheld: dict[str, int] = {}  # a member torch does not register keeps its own init: torch's model loads none either
    for pid, where in target.held.items():
        if pid not in filled_ids and pid not in target.unread:
            unheld[where] = unheld.get(where, 0) + 1
    for where, count in unheld.items():
        report.diagnostics.append(Diagnostic(
            "MP301", f"{where} ({count} parameter(s)) got no torch value: the model holds this module in a plain "
                     "list or dict, which torch does not register, so no state_dict or checkpoint has its tensors; "
                     "it keeps its random initial value, as the torch model's own copy does when it loads one",
            _WHERE, api=where, severity="warning",
            suggestion="hold it in nn.ModuleList/nn.ModuleDict in the torch model and save the checkpoint again, or "
                       "give its tensors under these names (the proof hands the torch model's own)"))
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


def _unread_parameters(cells) -> set[int]:
    """ids of MindSpore parameters that torch's state_dict has no counterpart for by design, and that the layer never
    reads or keeps constant: a BatchNorm's moving statistics under ``use_batch_statistics=True`` (torch's
    ``track_running_stats=False`` holds none), its fixed gamma/beta under ``affine=False`` (torch's holds no
    weight/bias), and a GroupNorm's likewise (MindSpore's GroupNorm(affine=False) keeps a constant gamma of ones and
    beta of zeros)."""
    from mindspore import nn
    from mindspore.nn.layer.normalization import _BatchNorm

    unread: set[int] = set()
    for cell in cells.values():
        if not isinstance(cell, (_BatchNorm, nn.GroupNorm)):
            continue
        if isinstance(cell, _BatchNorm) and cell.use_batch_statistics is True:
            unread.update(id(p) for p in (cell.moving_mean, cell.moving_variance))
        if not cell.gamma.requires_grad and not cell.beta.requires_grad:
            unread.update(id(p) for p in (cell.gamma, cell.beta))
    return unread


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
