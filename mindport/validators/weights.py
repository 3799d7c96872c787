"""torch state_dict -> MindSpore Cell parameters, names mapped from the mapping tables' weight rules.

The converter keeps attribute names, so a torch key ``features.1.running_mean`` names the cell ``features.1``;
the mapping entry of that cell's class says ``running_mean`` is ``moving_mean`` there. Every cell parameter must be
filled exactly once; whatever does not match is reported with the closest candidates.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mindport.errors import Diagnostic, InputError, MigrationError
from mindport.mappings import load_registry


@dataclass
class TransferReport:
    mapping: dict[str, str] = field(default_factory=dict)  # torch key -> MindSpore parameter name
    dropped: list[str] = field(default_factory=list)  # torch keys with no MindSpore counterpart by design
    missing: list[str] = field(default_factory=list)  # MindSpore parameters left unfilled
    unexpected: list[str] = field(default_factory=list)  # torch keys that matched nothing
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unexpected and not any(d.severity == "error" for d in self.diagnostics)


def load_state_dict(source) -> dict[str, np.ndarray]:
    """A torch state_dict (in memory, ``.pt/.pth/.bin`` or ``.safetensors``) as numpy arrays, loaded safely."""
    if isinstance(source, dict):
        state = source
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(f"checkpoint {path} does not exist")
        if path.suffix == ".safetensors":
            from safetensors.numpy import load_file

            try:
                return dict(load_file(str(path)))
            except Exception as exc:
                raise InputError(f"{path}: not a readable safetensors file ({exc})") from exc
        import pickle

        import torch

        try:
            state = torch.load(str(path), map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as exc:
            raise InputError(
                f"{path} holds more than tensors (a pickled model object?); mindport never unpickles objects. "
                "Save a state_dict instead: torch.save(model.state_dict(), 'model.pt')") from exc
        except Exception as exc:
            raise InputError(f"{path}: not a readable torch checkpoint ({type(exc).__name__}: {exc})") from exc
    for wrapper in ("state_dict", "model", "model_state_dict", "net"):
        if isinstance(state, dict) and isinstance(state.get(wrapper), dict):
            state = state[wrapper]
            break
    out: dict[str, np.ndarray] = {}
    for key, value in state.items():
        if key.startswith("module."):
            key = key[len("module."):]
        if hasattr(value, "detach"):
            value = value.detach().cpu()
            if str(value.dtype) == "torch.bfloat16":
                value = value.float()
            value = value.numpy()
        out[key] = np.asarray(value)
    return out


def _cell_index(cell):
    """Cell path -> (cell, {attribute name: Parameter}) for every cell of the network."""
    index = {}
    for path, sub in cell.cells_and_names():
        index[path] = (sub, dict(sub._params))  # noqa: SLF001 - a Cell's own parameters, by attribute name
    return index


def _ms_class_path(cell) -> str:
    cls = type(cell)
    module = cls.__module__
    if module.startswith("mindspore.nn") or module.startswith("mindspore.mint.nn"):
        root = "mindspore.mint.nn" if module.startswith("mindspore.mint") else "mindspore.nn"
        return f"{root}.{cls.__name__}"
    return f"{module}.{cls.__name__}"


def plan_transfer(state: dict[str, np.ndarray], cell) -> tuple[dict[str, tuple[object, np.ndarray]], TransferReport]:
    registry = load_registry()
    index = _cell_index(cell)
    report = TransferReport()
    plan: dict[str, tuple[object, np.ndarray]] = {}
    filled: dict[int, str] = {}
    for key, array in state.items():
        prefix, _, leaf = key.rpartition(".")
        if prefix not in index:
            report.unexpected.append(key)
            continue
        sub, params = index[prefix]
        entry = registry.layer_for_target(_ms_class_path(sub))
        rule = entry.weights if entry is not None else {}
        ms_leaf = rule.get(leaf, leaf)
        if ms_leaf == "":
            report.dropped.append(key)
            continue
        param = params.get(ms_leaf)
        if param is None:
            report.unexpected.append(key)
            continue
        transform = entry.weight_transforms.get(leaf) if entry is not None else None
        if transform:
            from mindport.mappings.transforms import WEIGHT_TRANSFORMS

            array = WEIGHT_TRANSFORMS[transform](array, tuple(param.shape))
        if tuple(array.shape) != tuple(param.shape):
            report.diagnostics.append(Diagnostic(
                "MP302", f"{key}: shape {tuple(array.shape)} does not fit {param.name} {tuple(param.shape)}",
                file="<weights>", api=key))
            continue
        if id(param) in filled:
            # tied weights: the same Parameter reached twice; the values must agree
            continue
        filled[id(param)] = key
        report.mapping[key] = param.name
        plan[key] = (param, array)
    all_params = {id(p): p for p in cell.get_parameters()}
    report.missing = [p.name for pid, p in all_params.items() if pid not in filled]
    for key in report.unexpected:
        candidates = difflib.get_close_matches(key, report.missing, n=3, cutoff=0.3)
        report.diagnostics.append(Diagnostic(
            "MP301", f"torch key {key} {tuple(state[key].shape)} matches no MindSpore parameter",
            file="<weights>", api=key, suggestion=f"closest: {', '.join(candidates)}" if candidates else ""))
    for name in report.missing:
        candidates = difflib.get_close_matches(name, report.unexpected, n=3, cutoff=0.3)
        report.diagnostics.append(Diagnostic(
            "MP301", f"MindSpore parameter {name} got no torch value", file="<weights>", api=name,
            suggestion=f"closest torch keys: {', '.join(candidates)}" if candidates else ""))
    return plan, report


def transfer_weights(state_dict_or_path, cell, *, strict: bool = True) -> TransferReport:
    """Fill ``cell`` in place from a torch state_dict or checkpoint path.

    Raises :class:`MigrationError` naming every unmatched key when ``strict`` and anything is unmatched.
    """
    import mindspore as ms

    state = load_state_dict(state_dict_or_path)
    plan, report = plan_transfer(state, cell)
    if strict and not report.ok:
        raise MigrationError("weights do not line up with the MindSpore model", report.diagnostics)
    for _key, (param, array) in plan.items():
        param.set_data(ms.Tensor(array, dtype=param.dtype))
    return report
