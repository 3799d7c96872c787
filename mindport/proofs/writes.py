"""Writing a layer's setting after construction (``m.eps = 1e-3``), measured against torch
(``mindport/mappings/data/surface/layer_writes.toml``, :func:`mindport.mappings.surface.load_writes`).

torch reads most constructor settings when ``forward`` runs (``F.batch_norm(x, ..., self.momentum, self.eps)``, a
Conv2d's stride, a Dropout's p); MindSpore bakes many of them into primitives in ``__init__``, so a write after
construction can change nothing there: a silent difference. For every mapped layer class (the surface data's layer
list):

* :func:`settings`: each constructor parameter of the installed torch class that the built layer keeps as a plain
  instance attribute (not a weight, buffer or sub-layer);
* :func:`measure`: for each, values other than the built one (:func:`candidates`) written on the torch layer and on
  the converted one, the eval-mode forward compared, and, for a layer with running statistics, one training-mode
  step (output and the running buffers: a BatchNorm's ``momentum``), Dropout-like layers by the share of zeros and
  the scale of what is kept in training mode. A write is ``same`` when writing it as written agrees for every value,
  ``converted`` when :func:`mindport.runtime.adapt.rebuild_layer` (the layer built again with the value) agrees,
  ``flagged`` otherwise (the values that disagree are named). A value that makes torch's forward raise agrees when
  the converted side raises too (at the write or the forward).

``python -m mindport.proofs.writes --write`` measures every layer and rewrites the data file.
"""
from __future__ import annotations

import copy
import inspect
import sys
import warnings

import numpy as np

from mindport.mappings import Entry
from mindport.mappings.surface import WRITES_FILE, load_surface, load_writes
from mindport.proofs.function import ProofError, _build_pair, _load, _to_numpy, make_input
from mindport.proofs.surface import _ms_layer, build_source, layer_entries, torch_layer

_STRINGS = ("sum", "mean", "none", "reflect", "replicate", "circular", "relu", "tanh", "bilinear", "nearest",
            "valid", "same", "tanh", "linear", "batchmean")


def settings(entry: Entry) -> list[str]:
    """The constructor parameters of the torch class that an instance keeps as plain attributes."""
    import torch

    layer = torch_layer(entry)
    if layer is None or not isinstance(layer, torch.nn.Module):
        return []
    params = inspect.signature(type(layer).__init__).parameters
    found = []
    for name in params:
        if name in ("self", "device", "dtype") or name not in vars(layer):
            continue
        value = vars(layer)[name]
        if isinstance(value, (torch.Tensor, torch.nn.Module)) or callable(value):
            continue
        found.append(name)
    return found


def candidates(name: str, value) -> list:
    """Values to write other than the built one: by the value's type."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [v for v in (value + 1, value - 1) if v >= 0 or value < 0][:2] + ([None] if name == "momentum" else [])
    if isinstance(value, float):
        picks = [0.3 if value != 0.3 else 0.6, value * 4 + 0.01]
        return picks + ([None] if name == "momentum" else [])
    if isinstance(value, tuple) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [tuple(v + 1 for v in value)]
    if isinstance(value, tuple) and value and all(isinstance(v, float) for v in value):
        return [tuple(v * 2 + 0.5 for v in value)]
    if isinstance(value, str):
        return [s for s in dict.fromkeys(_STRINGS) if s != value][:6]
    if value is None:
        return [2, 0.5]
    return []


def _inputs(entry: Entry, seed: int = 0) -> list[np.ndarray] | None:
    example = entry.example
    if example is None or example.program or not example.inputs:
        return None
    rng = np.random.default_rng(seed)
    arrays = {n: make_input(spec, rng) for n, spec in example.inputs.items()}
    names = [n.strip() for n in (example.call or ",".join(example.inputs)).split(",") if n.strip()]
    return [arrays[n] for n in names]


def _stochastic(entry: Entry) -> bool:
    return "Dropout" in entry.torch or entry.torch.endswith("RReLU")


def _observe(layer, inputs, framework: str, stochastic: bool, train_step: bool):
    """What model code sees of the layer: eval-mode outputs, and one training step (outputs, running buffers)."""
    import mindspore as ms
    import torch

    def run(xs):
        if framework == "torch":
            with torch.no_grad():
                out = layer(*[torch.tensor(x) if isinstance(x, np.ndarray) else x for x in xs])
        else:
            out = layer(*[ms.Tensor(x) if isinstance(x, np.ndarray) else x for x in xs])
        return [_to_numpy(o) for o in (out if isinstance(out, (tuple, list)) else [out]) if o is not None]

    def mode(train):
        if framework == "torch":
            layer.train(train)
        else:
            layer.set_train(train)

    seen = []
    if stochastic:  # the share of zeros and the scale of what is kept, on ones
        mode(True)
        ones = [np.ones_like(inputs[0]).repeat(max(1, 20000 // max(inputs[0].size, 1)), axis=0)]
        out = run(ones)[0]
        kept = out[out != 0]
        seen.append(np.array([round(float((out == 0).mean()), 1), round(float(kept.mean()), 1) if kept.size else 0.0]))
        mode(False)
        return seen
    mode(False)
    seen += run(inputs)
    for variant in (_odd(inputs, -1), _odd(inputs, -2)):  # sizes where a pool's ceil_mode or padding shows
        if variant is None:
            continue
        try:
            seen += run(variant)
        except Exception:  # noqa: BLE001 - a shape the layer refuses: noted, compared with the other side's
            seen.append(np.array([np.nan]))
    if train_step:
        mode(True)
        seen += run(inputs)
        if framework == "torch":
            found = [getattr(layer, b, None) for b in ("running_mean", "running_var")]
        else:  # under torch's names, wherever the converted layer keeps them (BatchNorm3d: bn2d.moving_mean)
            from mindport.runtime.adapt import layer_attribute

            found = []
            for b in ("running_mean", "running_var"):
                try:
                    found.append(layer_attribute(layer, b))
                except AttributeError:
                    found.append(None)
        seen += [_to_numpy(b) for b in found if b is not None]
        mode(False)
    return seen


def _odd(inputs, axis: int):
    """The inputs with the first float array of 3 or more dimensions one longer along ``axis`` (an odd size)."""
    out, done = [], False
    for x in inputs:
        if not done and isinstance(x, np.ndarray) and x.ndim >= 3 and x.dtype.kind == "f":
            x = np.concatenate([x, np.take(x, [0], axis=axis) * 0.5], axis=axis)
            done = True
        out.append(x)
    return out if done else None


def _agree(a, b) -> bool:
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        return isinstance(a, BaseException) and isinstance(b, BaseException)
    return len(a) == len(b) and all(x.shape == y.shape and np.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True)
                                    for x, y in zip(a, b))


def _attempt(action, layer, inputs, framework, stochastic, train_step):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            action(layer)
            return _observe(layer, inputs, framework, stochastic, train_step)
    except Exception as exc:  # noqa: BLE001 - an error is an outcome compared with the other side's
        return exc


def measure(entry: Entry) -> dict[str, tuple[str, str]]:
    """setting -> (ends, how) for one layer entry."""
    from mindport.runtime.adapt import rebuild_layer

    names = settings(entry)
    if not names:
        return {}
    inputs = _inputs(entry)
    if inputs is None or build_source(entry) is None or not entry.supported:
        why = "the layer has no supported entry" if not entry.supported else "no example input to measure it with"
        return {n: ("flagged", f"not measured ({why}): write it in the constructor call") for n in names}
    try:
        t_base, m_base = _ms_layer(entry)
    except Exception as exc:  # noqa: BLE001
        return {n: ("flagged", f"not measured (the example does not convert: {type(exc).__name__}): write it in the "
                               "constructor call") for n in names}
    stochastic = _stochastic(entry)
    train_step = getattr(t_base, "running_mean", None) is not None
    t_before = _attempt(lambda t: None, copy.deepcopy(t_base), inputs, "torch", stochastic, train_step)
    found = {}
    for name in names:
        values = candidates(name, getattr(t_base, name))
        if not values:
            found[name] = ("flagged", f"not measured (no value to try for {getattr(t_base, name)!r})")
            continue
        plain_ok, bad, agreed, refused, torch_refuses, effective = True, [], [], [], [], False
        for value in values:
            try:
                t_layer, m_plain, m_rebuilt = copy.deepcopy(t_base), _fresh(entry, t_base), _fresh(entry, t_base)
            except Exception as exc:  # noqa: BLE001 - the converted example no longer builds: not measured
                bad.append(f"{value!r} (the converted layer did not build again: {type(exc).__name__})")
                continue
            t_out = _attempt(lambda t: setattr(t, name, value), t_layer, inputs, "torch", stochastic, train_step)
            if isinstance(t_out, BaseException):  # torch refuses the value: no code writes it
                torch_refuses.append(value)
                continue
            plain = _attempt(lambda m: setattr(m, name, value), m_plain, inputs, "ms", stochastic, train_step)
            rebuilt = _attempt(lambda m: rebuild_layer(m, entry, name, value, names), m_rebuilt, inputs, "ms",
                               stochastic, train_step)
            plain_ok &= _agree(t_out, plain)
            effective |= not _agree(t_out, t_before)
            if _agree(t_out, rebuilt):
                agreed.append(value)
            elif isinstance(rebuilt, BaseException):  # loud: the accessor raises, never a silent difference
                refused.append((value, rebuilt))
            else:
                bad.append(repr(value))
        if not agreed and not bad and not refused:
            found[name] = ("same", "as written (torch's result did not change either on the measured inputs: torch "
                           f"refuses every value tried, {', '.join(map(repr, torch_refuses))})")
        elif plain_ok:
            found[name] = ("same", "as written" if effective else
                           "as written (torch's result did not change either on the measured inputs)")
        elif agreed and not bad:
            how = "rebuilt"
            if refused:
                how += "; raises for " + ", ".join(f"{v!r} ({type(e).__name__}: {str(e).splitlines()[0][:120]})"
                                                   for v, e in refused)
            found[name] = ("converted", how)
        elif bad:
            found[name] = ("flagged", f"MindSpore bakes it into the layer in __init__ and the layer built again "
                           f"with {', '.join(map(str, bad))} does not give torch's result: pass it to the "
                           "constructor instead")
        else:
            value, exc = refused[0]
            found[name] = ("flagged", f"MindSpore bakes it into the layer in __init__ and cannot build the layer "
                           f"again with {value!r} ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}): pass it "
                           "to the constructor instead")
    return found


_CONVERTED: dict = {}


def _fresh(entry: Entry, t_layer):
    """A converted layer carrying t_layer's weights (the example converted once)."""
    from mindport.migrator import convert_source
    from mindport.migrator.weights import transfer_weights

    if entry.torch not in _CONVERTED:
        _CONVERTED[entry.torch] = _load(convert_source(build_source(entry), f"<writes {entry.torch}>").code,
                                        "writes_ms")
    m_layer = _CONVERTED[entry.torch].build()
    state = t_layer.state_dict()
    if state:
        transfer_weights(state, m_layer)
    return m_layer


def mapped_layers() -> list[Entry]:
    names = set(load_surface().layers)
    return [e for e in layer_entries() if e.torch in names]


def unaccounted() -> dict[str, list[str]]:
    """torch layer -> the settings torch keeps that layer_writes.toml does not list."""
    data = load_writes()
    missing = {}
    for entry in mapped_layers():
        names = [n for n in settings(entry) if n not in data.get(entry.torch, {})]
        if names:
            missing[entry.torch] = names
    return missing


def counts() -> dict[str, int]:
    data = load_writes()
    ends = [e for table in data.values() for e, _ in table.values()]
    return {"settings": len(ends), **{k: ends.count(k) for k in ("same", "converted", "flagged")}}


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write(only: list[str] | None = None) -> int:
    lines = ["# Writing a layer's setting after construction (`m.eps = 1e-3`), measured against torch by",
             "# `python -m mindport.proofs.writes --write` (mindport/proofs/writes.py; read by",
             "# mindport.mappings.surface.load_writes): for every constructor setting torch keeps as an attribute,",
             "# `same` = the write as written gives torch's behaviour (`unchanged`: so, and torch's result did not change",
             "# either on the measured inputs); `converted` = how the converter and",
             "# mp_adapt.set_layer_attribute make it (rebuilt: the layer built again with the value, its primitives moved",
             "# onto the Cell); `flagged` = why not (the converter flags the write, the accessor raises).", ""]
    old = load_writes()
    for entry in mapped_layers():
        if only and entry.torch not in only:
            found = old.get(entry.torch, {})
        else:
            found = measure(entry)
            print(entry.torch, {k: v[0] for k, v in found.items()}, file=sys.stderr, flush=True)
        if not found:
            continue
        lines.append(f'[layer."{entry.torch}"]')
        for key, inert in (("same", False), ("unchanged", True)):
            same = [n for n, (e, h) in found.items() if e == "same" and ("did not change" in h) is inert]
            if same:
                lines.append(f"{key} = [" + ", ".join(_toml_string(n) for n in same) + "]")
        for end in ("converted", "flagged"):
            items = {n: h for n, (e, h) in found.items() if e == end}
            if items:
                lines.append(f"{end} = {{ " + ", ".join(f"{n} = {_toml_string(h)}" for n, h in items.items()) + " }")
        lines.append("")
    WRITES_FILE.write_text("\n".join(lines), encoding="utf-8")
    load_writes.cache_clear()
    return 0


if __name__ == "__main__":
    if "--write" in sys.argv:
        sys.exit(write([a for a in sys.argv[1:] if a != "--write"] or None))
    print(counts())
