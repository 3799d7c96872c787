"""Layer-by-layer localisation: which layer of the MindSpore port diverges first, and why.

Forward hooks on every torch module and every MindSpore cell record each call's inputs, output and call site
(``file:line`` of the user's statement) in completion order (a layer's hook fires when its ``forward``/``construct``
returns, so children come before their parent). The hooks run inside each side's process; the records reach the
parent as plain data. The converter keeps attribute names, so the module path ``features.1`` names the same layer on
both sides; calls are matched by (path, call number), so a layer used twice is compared twice.

A diverging layer is the cause when its inputs agree and its output does not (msprobe's rule), or a known trap
explains it; the first cause in completion order is the report's first divergent layer. Its two configurations are
compared by the known-trap rules below (``TRAPS``); the rule that explains the difference becomes the report's cause.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# ----------------------------------------------------------------------------------------------------------------
# Recording MindSpore constructor arguments (cells keep only some of them as attributes)

_CTOR_ARGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def record_constructor_args():
    """While active, every new MindSpore Cell remembers its constructor arguments (for the config comparison).

    ``mindspore.nn.Cell.__new__`` receives the same arguments as ``__init__``; it is wrapped for the duration and
    restored afterwards.
    """
    from mindspore import nn

    original = vars(nn.Cell)["__new__"]
    inner = original.__func__

    def recording_new(class_, *args, **kwargs):
        cell = inner(class_, *args, **kwargs)
        if args or kwargs:  # copy.deepcopy (TransformerEncoder's layer copies) calls __new__ with nothing
            with contextlib.suppress(TypeError):
                _CTOR_ARGS[cell] = (args, kwargs)
        return cell

    nn.Cell.__new__ = staticmethod(recording_new)
    try:
        yield
    finally:
        nn.Cell.__new__ = original


_SCALARS = (bool, int, float, str, type(None))


def _plain(value):
    """A JSON-friendly rendering of a configuration value, or None-marker ``...`` when it is not a plain value."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, _SCALARS) for v in value):
        return tuple(value)
    if hasattr(value, "dtype") and not hasattr(value, "shape"):  # a dtype object
        return str(value)
    return ...


_TORCH_SKIP = {"training", "inplace"}
_MS_SKIP = {
    "training", "requires_grad", "is_top_cell", "arguments_key", "mixed_precision_type", "cell_type",
    "grad_ops_label", "has_bprop", "parallel_mode", "data_format", "format", "ascend_910b_target", "is_expand",
    "is_expand_3d", "activation_flag", "use_pad", "is_valid", "is_same", "is_pad", "shp_flat", "dtype",
    "weight_init", "bias_init", "gamma_init", "beta_init", "moving_mean_init", "moving_var_init",
}
# Attributes of internal primitives that the Cell does not keep itself.
_PRIM_KEYS = {"count_include_pad", "axis", "ceil_mode", "output_size", "divisor_override"}


def torch_config(module) -> dict:
    cfg = {}
    for key, value in vars(module).items():
        if key.startswith("_") or key in _TORCH_SKIP:
            continue
        plain = _plain(value)
        if plain is not ...:
            cfg[key] = plain
    params = getattr(module, "_parameters", {})
    if "bias" in params:
        cfg["bias"] = params["bias"] is not None
    return cfg


def ms_config(cell) -> dict:
    """Constructor arguments (with defaults) when recorded, else the cell's plain attributes."""
    import inspect

    cfg = {}
    recorded = _CTOR_ARGS.get(cell)
    if recorded is not None:
        args, kwargs = recorded
        try:
            bound = inspect.signature(type(cell).__init__).bind(None, *args, **kwargs)
            bound.apply_defaults()
            for key, value in list(bound.arguments.items())[1:]:
                if key in _MS_SKIP:
                    continue
                plain = _plain(value)
                if plain is not ...:
                    cfg[key] = plain
        except TypeError:
            recorded = None
    if recorded is None:
        for key, value in vars(cell).items():
            if key.startswith("_") or key in _MS_SKIP:
                continue
            plain = _plain(value)
            if plain is not ...:
                cfg[key] = plain
        if "momentum" in cfg and "BatchNorm" in type(cell).__name__ and isinstance(cfg["momentum"], float):
            # nn.BatchNorm stores torch's convention internally (1 - the constructor's momentum)
            cfg["momentum"] = round(1.0 - cfg["momentum"], 12)
        for value in vars(cell).values():
            attrs = getattr(value, "attrs", None)
            if isinstance(attrs, dict) and type(value).__module__.startswith("mindspore.ops"):
                for key in _PRIM_KEYS & attrs.keys():
                    plain = _plain(attrs[key])
                    if plain is not ... and key not in cfg:
                        cfg[key] = plain[0] if key == "axis" and isinstance(plain, tuple) and len(plain) == 1 else plain
    return cfg


# ----------------------------------------------------------------------------------------------------------------
# Known traps: torch defaults that MindSpore spells or defaults differently (docs: mindspore-facts.md, section 2)

def _close(a, b) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-12)
    except (TypeError, ValueError):
        return a == b


def _ntuple(value, n: int):
    if isinstance(value, (tuple, list)):
        return tuple(value) if len(value) == n else tuple(value)[-n:]
    return (value,) * n


def _eps(t: dict, m: dict) -> str | None:
    tv = t.get("eps")
    key = "epsilon" if "epsilon" in m else "eps"
    mv = m.get(key)
    if tv is None or mv is None or _close(tv, mv):
        return None
    return (f"eps differs: torch eps={tv:g}, MindSpore {key}={mv:g} (MindSpore LayerNorm defaults to "
            f"epsilon=1e-7, torch norms to eps=1e-5: pass {key}={tv:g})")


def _momentum(t: dict, m: dict) -> str | None:
    tv, mv = t.get("momentum", ...), m.get("momentum")
    if tv is ... or mv is None:
        return None
    if tv is None:
        return "torch momentum=None (cumulative average) has no MindSpore BatchNorm equivalent"
    if _close(1.0 - tv, mv):
        return None
    return (f"BatchNorm momentum is inverted in MindSpore (ms = 1 - torch): torch momentum={tv:g} needs "
            f"momentum={1.0 - tv:g}, got momentum={mv:g}; running statistics drift apart in training")


def _gelu(t: dict, m: dict) -> str | None:
    tv, mv = t.get("approximate", "none"), m.get("approximate")
    if mv is None:
        return None
    mv_name = ("tanh" if mv else "none") if isinstance(mv, bool) else str(mv)
    if mv_name == tv:
        return None
    return (f"GELU approximation differs: torch approximate={tv!r}, MindSpore approximate={mv!r} "
            f"(MindSpore defaults to the tanh approximation: pass approximate={tv == 'tanh'})")


def _conv_padding(t: dict, m: dict) -> str | None:
    if "pad_mode" not in m:
        return None
    nd = len(t.get("kernel_size", (0, 0))) if isinstance(t.get("kernel_size"), tuple) else 2
    tp = t.get("padding", 0)
    if t.get("padding_mode", "zeros") != "zeros":
        return f"torch padding_mode={t['padding_mode']!r} has no MindSpore Conv equivalent: pad explicitly (ops.pad)"
    if isinstance(tp, str):
        torch_pad = tp
    else:
        torch_pad = tuple(v for p in _ntuple(tp, nd) for v in (p, p))
    mode = str(m.get("pad_mode", "same")).lower()
    if mode in ("same", "valid"):
        ms_pad = mode if mode == "same" else (0,) * (2 * nd)
    else:
        mp = m.get("padding", 0)
        ms_pad = tuple(v for p in _ntuple(mp, nd) for v in (p, p)) if not isinstance(mp, tuple) or len(mp) == nd \
            else _ntuple(mp, 2 * nd)
    if torch_pad == "valid":
        torch_pad = (0,) * (2 * nd)
    if torch_pad == ms_pad:
        return None
    return (f"padding differs: torch padding={tp!r}, MindSpore pad_mode={m.get('pad_mode')!r} "
            f"padding={m.get('padding', 0)!r} (MindSpore Conv defaults to pad_mode='same'; torch padding=p needs "
            f"pad_mode='pad', padding=p, and padding=0 needs pad_mode='valid')")


def _stride(t: dict, m: dict, pool: bool) -> str | None:
    if "stride" not in t or "stride" not in m:
        return None
    ks = t.get("kernel_size")
    n = len(ks) if isinstance(ks, tuple) else (len(t["stride"]) if isinstance(t["stride"], tuple) else 1)
    tv, mv = _ntuple(t["stride"], n), _ntuple(m["stride"], n)
    if tv == mv:
        return None
    text = f"stride differs: torch stride={t['stride']!r}, MindSpore stride={m['stride']!r}"
    if pool:
        text += " (torch pooling defaults stride to kernel_size, MindSpore to 1: always pass stride=)"
    return text


def _pool_other(t: dict, m: dict) -> str | None:
    problems = []
    if "kernel_size" in m and _ntuple(t.get("kernel_size"), 2) != _ntuple(m["kernel_size"], 2):
        problems.append(f"kernel_size torch={t.get('kernel_size')!r} MindSpore={m['kernel_size']!r}")
    tp, mp = t.get("padding", 0), m.get("padding", 0)
    if "padding" in m and _ntuple(tp, 2) != _ntuple(mp, 2) and not (isinstance(mp, tuple) and len(mp) == 4):
        problems.append(f"padding torch={tp!r} MindSpore pad_mode={m.get('pad_mode')!r} padding={mp!r}")
    if "ceil_mode" in m and bool(t.get("ceil_mode", False)) != bool(m["ceil_mode"]):
        problems.append(f"ceil_mode torch={t.get('ceil_mode')!r} MindSpore={m['ceil_mode']!r}")
    return "pooling window differs: " + "; ".join(problems) if problems else None


def _count_include_pad(t: dict, m: dict) -> str | None:
    if "count_include_pad" not in m or "count_include_pad" not in t:
        return None
    if bool(t["count_include_pad"]) == bool(m["count_include_pad"]):
        return None
    return (f"count_include_pad differs: torch count_include_pad={t['count_include_pad']!r}, MindSpore "
            f"count_include_pad={m['count_include_pad']!r} (averages at the borders change)")


def _has_bias(t: dict, m: dict) -> str | None:
    if "bias" not in t or "has_bias" not in m or bool(t["bias"]) == bool(m["has_bias"]):
        return None
    return (f"bias differs: torch bias={t['bias']!r}, MindSpore has_bias={m['has_bias']!r} (MindSpore Conv "
            f"defaults to has_bias=False, torch to bias=True: pass has_bias=)")


def _align_corners(t: dict, m: dict) -> str | None:
    tv, mv = bool(t.get("align_corners") or False), bool(m.get("align_corners") or False)
    problems = []
    if tv != mv:
        problems.append(f"align_corners differs: torch align_corners={t.get('align_corners')!r}, MindSpore "
                        f"align_corners={m.get('align_corners')!r}")
    if "mode" in m and t.get("mode") != m.get("mode"):
        problems.append(f"interpolation mode differs: torch mode={t.get('mode')!r}, MindSpore mode={m['mode']!r}")
    return "; ".join(problems) or None


def _leaky(t: dict, m: dict) -> str | None:
    tv, mv = t.get("negative_slope", 0.01), m.get("alpha")
    if mv is None or _close(tv, mv):
        return None
    return (f"LeakyReLU slope differs: torch negative_slope={tv:g}, MindSpore alpha={mv:g} "
            f"(MindSpore defaults to alpha=0.2, torch to 0.01)")


def _softmax_axis(t: dict, m: dict) -> str | None:
    tv, mv = t.get("dim"), m.get("axis")
    if tv is None or mv is None or tv == mv:
        return None
    return f"softmax axis differs: torch dim={tv!r}, MindSpore axis={mv!r}"


def _dropout(t: dict, m: dict) -> str | None:
    tv = t.get("p")
    mv = m.get("p")
    if mv is None and m.get("keep_prob") is not None:
        mv = 1.0 - m["keep_prob"]
    if tv is None or mv is None or _close(tv, mv):
        return None
    return (f"dropout rate differs: torch p={tv:g} (drop probability), MindSpore drops {mv:g} "
            f"(keep_prob is the probability to KEEP: use p=)")


@dataclass(frozen=True)
class Trap:
    """A known default/semantics difference: the torch layers it concerns and a check of the two configs."""

    name: str
    torch_types: tuple[str, ...]
    check: Callable[[dict, dict], str | None]
    training_only: bool = False  # invisible in eval-mode outputs: flagged from the configuration alone


_NORMS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d",
          "InstanceNorm3d", "GroupNorm", "LayerNorm")
_BN = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")
_CONVS = ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
_POOLS = ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d")

TRAPS: tuple[Trap, ...] = (
    Trap("eps", _NORMS, _eps),
    Trap("momentum", _BN, _momentum, training_only=True),
    Trap("gelu_approximate", ("GELU",), _gelu),
    Trap("padding", _CONVS, _conv_padding),
    Trap("stride", _CONVS, lambda t, m: _stride(t, m, pool=False)),
    Trap("has_bias", _CONVS + ("Linear",), _has_bias),
    Trap("pool_stride", _POOLS, lambda t, m: _stride(t, m, pool=True)),
    Trap("pool_window", _POOLS, _pool_other),
    Trap("count_include_pad", ("AvgPool1d", "AvgPool2d", "AvgPool3d"), _count_include_pad),
    Trap("align_corners", ("Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"), _align_corners),
    Trap("leaky_relu_slope", ("LeakyReLU",), _leaky),
    Trap("softmax_axis", ("Softmax", "LogSoftmax"), _softmax_axis),
    Trap("dropout_rate", ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d"), _dropout, training_only=True),
)


@dataclass
class Finding:
    trap: str
    cause: str
    training_only: bool


def find_traps(torch_type: str, tcfg: dict, mcfg: dict) -> list[Finding]:
    found = []
    for trap in TRAPS:
        if torch_type not in trap.torch_types:
            continue
        try:
            cause = trap.check(tcfg, mcfg)
        except Exception:  # noqa: BLE001 - an odd config must not break the report
            cause = None
        if cause:
            found.append(Finding(trap.name, cause, trap.training_only))
    return found


_CONVENTION_DIFFERS = {"momentum"}  # BatchNorm: MindSpore's is 1 - torch's


def config_differences(tcfg: dict, mcfg: dict, limit: int = 6) -> list[str]:
    """Same-named settings with different values (for layers no trap explains)."""
    out = []
    for key in sorted(tcfg.keys() & mcfg.keys()):
        if key in _CONVENTION_DIFFERS:
            continue  # same name, different meaning: the traps compare these with the conversion rule
        a, b = tcfg[key], mcfg[key]
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            same = _close(a, b)
        elif isinstance(a, tuple) or isinstance(b, tuple):
            n = max(len(a) if isinstance(a, tuple) else 1, len(b) if isinstance(b, tuple) else 1)
            same = _ntuple(a, n) == _ntuple(b, n)
        else:
            same = a == b
        if not same:
            out.append(f"{key}: torch={a!r} MindSpore={b!r}")
    return out[:limit]


# ----------------------------------------------------------------------------------------------------------------
# Capturing every layer's inputs, output and call site (runs inside a side: torch or MindSpore)

def _leaves(obj) -> list:
    from mindport.validators.parity.metrics import flatten_outputs, to_numpy

    out = []
    for _, value in flatten_outputs(obj):
        try:
            array = to_numpy(value)
        except TypeError:
            continue  # a non-tensor argument (a module, a string): not compared
        if array is None:
            continue
        array = np.asarray(array)
        if array.dtype.kind not in "biufc":
            continue
        # A copy: a later in-place layer (torch ReLU(inplace=True)) would otherwise rewrite the recorded output.
        out.append(np.array(array, copy=True))
    return out


@functools.lru_cache(maxsize=1)
def _framework_dirs() -> tuple[str, ...]:
    """Source folders whose frames are not the user's statement: the frameworks, the stdlib, this package and the
    runtime layer (its Cells call sub-cells on the user's behalf)."""
    import importlib.util
    import sysconfig

    dirs = [sysconfig.get_paths()["stdlib"], os.path.dirname(os.path.abspath(__file__)),
            os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "runtime")]
    for name in ("torch", "mindspore", "onnx"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(spec.submodule_search_locations)
    return tuple(os.path.join(d, "") for d in dirs)


def call_site(frame) -> str:
    """``file:line`` of the innermost frame outside the frameworks: the statement that called the layer."""
    skip = _framework_dirs()
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<") and not filename.startswith(skip):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def raise_site(exc: BaseException) -> str:
    """``file:line`` of the innermost statement outside the frameworks that an exception went through."""
    skip = _framework_dirs()
    found, tb = "", exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<") and not filename.startswith(skip):
            found = f"{filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def definition_site(layer, method: str) -> str:
    """``file:line`` of a user-defined layer's forward/construct ("" for framework classes)."""
    cls = type(layer)
    if cls.__module__.startswith(("torch.", "mindspore.", "mindport.runtime")):
        return ""
    code = getattr(getattr(cls, method, None), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


def _hooked(named, records: list[dict], started: list | None = None):
    """Hooks on every layer: its inputs are copied when it starts (an in-place layer, torch's ReLU(inplace=True),
    rewrites them before it returns), its output when it returns. ``started`` receives (path, call) at each start."""
    calls: dict[str, int] = {}
    starts: dict[str, int] = {}
    pending: dict[str, list] = {}
    handles = []
    for path, layer in named:
        def pre_hook(layer, inputs, path=path):
            try:
                ins = _leaves(inputs)
            except Exception:  # noqa: BLE001 - unflattenable inputs are just not compared
                ins = []
            pending.setdefault(path, []).append(ins)
            if started is not None:
                starts[path] = starts.get(path, -1) + 1
                started.append((path, starts[path]))

        def hook(layer, inputs, output, path=path):
            n = calls.get(path, 0)
            calls[path] = n + 1
            try:
                leaves = _leaves(output)
            except Exception:  # noqa: BLE001 - an unflattenable output is just not compared
                leaves = []
            stack = pending.get(path)
            records.append({"path": path, "call": n, "type": type(layer).__name__,
                            "type_module": type(layer).__module__, "leaves": leaves,
                            "inputs": stack.pop() if stack else [], "site": call_site(sys._getframe(1)),
                            "layer": layer})
        handles.append(layer.register_forward_pre_hook(pre_hook))
        handles.append(layer.register_forward_hook(hook))
    return handles


def finish_records(records: list[dict], config, method: str, extra=None) -> list[dict]:
    """Plain records (no layer objects) for the parent: each layer's settings and definition site added once."""
    cache: dict[int, tuple] = {}
    for rec in records:
        layer = rec.pop("layer", None)
        if layer is None:
            continue
        if id(layer) not in cache:
            info = {"config": config(layer), "def": definition_site(layer, method)}
            if extra is not None:
                info.update(extra(layer))
            cache[id(layer)] = info
        rec.update(cache[id(layer)])
    return records


@contextlib.contextmanager
def torch_hooks(module, records: list[dict]):
    handles = _hooked(list(module.named_modules()), records)
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def ms_hooks(cell, records: list[dict], started: list | None = None):
    """Record every cell's inputs and output; ``started`` (optional) receives (path, call) as each cell starts, so
    that the cell that raised is the innermost one that started and never returned."""
    handles = _hooked(list(cell.cells_and_names()), records, started)
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def mapped_torch_name(ms_layer) -> str:
    """The torch class name whose mapping entry targets this MindSpore class ("" when none)."""
    try:
        from mindport.mappings import load_registry
        from mindport.migrator.weights.plan import _ms_class_path

        entry = load_registry().layer_for_target(_ms_class_path(ms_layer))
    except Exception:  # noqa: BLE001
        return ""
    return entry.torch.rsplit(".", 1)[-1] if entry is not None else ""


def types_correspond(torch_rec: dict, ms_rec: dict) -> bool:
    tname, mname = torch_rec["type"], ms_rec["type"]
    if tname == mname:
        return True
    return torch_rec.get("type_module", "").startswith("torch.nn") and ms_rec.get("mapped_torch") == tname


# ----------------------------------------------------------------------------------------------------------------
# Who introduced the error (runs in the parent, on the records both sides sent)

AMPLIFICATION = 10.0  # a layer is the cause when its output error (relative to scale) is 10x its inputs' error


def _inside(path: str, ancestor: str) -> bool:
    return ancestor == "" and path != "" or path.startswith(ancestor + ".")


def localize_layers(ref_records: list[dict], ms_records: list[dict], rtol: float, atol: float) -> list:
    """One LayerResult per torch layer call, in completion order, with msprobe's grade and the layer's role.

    A diverging layer is the *cause* when a known trap explains it, or when its inputs agree (exactly, or with an
    error at most a tenth of its output's, relative to each tensor's scale) while its output diverges; it only
    *propagates* the error when its inputs already carry it; it *contains* the cause when the cause is one of its
    sub-layers. Gradual float drift thus blames no layer (see :func:`drift_note`).
    """
    from mindport.validators.parity.metrics import (
        grade,
        is_constant,
        is_float,
        layer_metrics,
        leaves_metrics,
    )
    from mindport.validators.parity.results import LayerResult

    ms_by_key = {(r["path"], r["call"]): r for r in ms_records}
    results: list[LayerResult] = []
    for index, rec in enumerate(ref_records):
        ms_rec = ms_by_key.get((rec["path"], rec["call"]))
        tcfg = rec.get("config", {})
        floats = [a for a in rec["leaves"] if is_float(a)]
        lr = LayerResult(index, rec["path"], rec["call"], rec["type"], "", "missing_in_mindspore", torch_config=tcfg,
                         torch_site=rec.get("site", ""), torch_def=rec.get("def", ""),
                         constant=bool(floats) and all(is_constant(a) for a in floats))
        inputs = None
        if ms_rec is None:
            lr.note = "no MindSpore cell ran at this path (it raised earlier, or was renamed)"
            lr.grade = "error"
        else:
            mcfg = ms_rec.get("config", {})
            metrics = layer_metrics(rec["leaves"], ms_rec["leaves"], rtol, atol)
            nan_ok = metrics.pop("nan_ok", True)
            lr.status, lr.note = metrics.pop("status"), metrics.pop("note", "")
            for key, value in metrics.items():
                setattr(lr, key, value)
            lr.ms_type, lr.ms_config = ms_rec["type"], mcfg
            lr.ms_site, lr.ms_def = ms_rec.get("site", ""), ms_rec.get("def", "")
            inputs = leaves_metrics(rec.get("inputs", []), ms_rec.get("inputs", []))
            if inputs is not None and inputs["size"]:
                lr.input_max_rel, lr.input_cosine = inputs["max_rel"], inputs["cosine"]
                lr.input_ratio_1e3 = inputs["ratio_1e3"]
            else:
                inputs = None
            if lr.status == "shape_mismatch":
                lr.grade, lr.grade_reasons = "error", ["output shapes differ"]
            else:
                lr.grade, lr.grade_reasons = grade({**metrics, "nan_ok": nan_ok}, inputs)
            if not types_correspond(rec, ms_rec):
                lr.note = (lr.note + "; " if lr.note else "") + f"types differ: {rec['type']} vs {ms_rec['type']}"
            lr.causes = [dataclasses.asdict(f) for f in find_traps(rec["type"], tcfg, mcfg)]
        _assign_role(lr, results, inputs, rtol, atol)
        results.append(lr)
    return results


def _assign_role(lr, results: list, inputs: dict | None, rtol: float, atol: float) -> None:
    if not lr.diverged:
        return

    def add(note: str) -> None:
        lr.note = ((lr.note + "; ") if lr.note else "") + note

    inner_causes = [r for r in results if r.role == "cause" and _inside(r.path, lr.path)]
    if lr.causes:
        lr.role = "cause"
        return
    if inner_causes:
        lr.role = "contains"
        return
    if inputs is not None:
        in_rel, out_rel = inputs["max_rel"], lr.max_rel
        inputs_agree = inputs["max_abs"] <= atol + rtol * inputs["ref_scale"]
        if lr.status != "diverged" or out_rel is None:
            lr.role = "cause" if inputs_agree else "propagated"
        elif inputs["max_abs"] == 0 or out_rel >= AMPLIFICATION * in_rel:
            lr.role = "cause"
        else:
            lr.role = "propagated"
            add(f"its inputs already differ (error {in_rel:.2g} of their scale, output {out_rel:.2g}): "
                "propagated, not introduced here")
            return
    else:
        earlier = [r for r in results if r.diverged and not _inside(r.path, lr.path)]
        if earlier:
            lr.role = "propagated"
            add("follows an earlier divergence")
            return
        lr.role = "cause"
    children = [r for r in results if _inside(r.path, lr.path)]
    if lr.role != "cause" or lr.status != "diverged":
        return
    if children and any(c.diverged for c in children) and not _error_enters_between(lr, children):
        # its sub-layers carried the error on, each a little further, and none of them introduced it: drift
        lr.role = "propagated"
        add("its sub-layers carry an error that grows through them; none introduces it")
    elif children:
        add("its sub-layers matched or only passed an error on: the difference comes from this layer's own forward "
            "code (functional calls between its sub-layers)")
    else:
        diffs = config_differences(lr.torch_config, lr.ms_config)
        add("settings differ: " + "; ".join(diffs) if diffs else "no known trap matches these settings")


def _error_enters_between(parent, descendants: list) -> bool:
    """True when a sub-layer's inputs carry a much larger error (x AMPLIFICATION) than the parent's inputs and every
    output before it: the parent's own code between its sub-layers put it there."""
    for i, child in enumerate(descendants):
        if child.input_max_rel is None:
            continue
        before = [d.max_rel for d in descendants[:i] if d.max_rel is not None and not _inside(d.path, child.path)]
        previous = max([parent.input_max_rel or 0.0, *before])
        if child.input_max_rel > AMPLIFICATION * previous and child.input_max_rel > 0:
            return True
    return False


def drift_note(layers: list) -> str:
    """When the outputs diverge and no layer is the cause: the error grew gradually; name the largest growth."""
    best, growth = None, 0.0
    for lr in layers:
        if lr.max_rel is None or lr.input_max_rel is None or lr.input_max_rel == 0:
            continue
        g = lr.max_rel / lr.input_max_rel
        if g > growth:
            best, growth = lr, g
    text = ("accumulated drift: no layer introduces the error (each one's output error stays within "
            f"{AMPLIFICATION:g}x its inputs'), it grows from layer to layer")
    if best is not None:
        text += f"; the largest growth is x{growth:.3g} at {best.path or '<root>'} ({best.torch_type})"
    return text


# ----------------------------------------------------------------------------------------------------------------
# Where it failed: the statement and its `# mindport:` diagnostics

@functools.lru_cache(maxsize=64)
def _statements(path: str) -> tuple[list[str], list[tuple[int, int]]]:
    import ast

    try:
        text = open(path, encoding="utf-8").read()  # noqa: SIM115 - read once, cached
    except OSError:
        return [], []
    lines = text.splitlines()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return lines, []
    spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    return lines, spans


def statement_at(site: str) -> tuple[str, list[str]]:
    """The source of the statement at ``file:line`` (first line, stripped) and the ``# mindport:`` comments on it."""
    path, _, line = site.rpartition(":")
    if not path or not line.isdigit():
        return "", []
    lines, spans = _statements(path)
    n = int(line)
    if not 0 < n <= len(lines):
        return "", []
    # the innermost simple statement containing the line (compound statements span their whole body)
    start, end = min((s for s in spans if s[0] <= n <= s[1]), key=lambda s: s[1] - s[0], default=(n, n))
    found = []
    for text in lines[start - 1:end]:
        marker = text.find("# mindport:")
        if marker != -1:
            found.append(text[marker + 2:].strip())
    return lines[n - 1].strip(), found
