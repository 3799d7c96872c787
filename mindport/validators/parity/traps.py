"""Known traps: torch defaults that MindSpore spells or defaults differently (docs: mindspore-facts.md, section 2).
Each rule (``TRAPS``) compares the two configurations of a layer and says what explains a difference."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


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
        if m.get("padding_mode") == t["padding_mode"]:
            return None  # mindport's mode-padded layer pads with torch's mode itself (runtime.layers._mode_padded)
        return f"torch padding_mode={t['padding_mode']!r} has no MindSpore Conv equivalent: pad explicitly (ops.pad)"
    if isinstance(tp, str):
        torch_pad = tp
    else:
        # a transposed convolution's output_padding op crops p - op at the end of an axis instead of p: MindSpore's
        # asymmetric (p, p - op) per axis (the converter's rule) unless the MindSpore layer takes torch's
        # output_padding itself (mindport's Conv1dTranspose). pix2pixHD's GlobalGenerator (padding=1,
        # output_padding=1 -> padding=(1, 0, 1, 0)) was "diverged: known trap" with outputs 5e-7 apart
        op = (0,) * nd if any(_ntuple(m.get("output_padding", 0) or 0, nd)) else \
            _ntuple(t.get("output_padding", 0) or 0, nd)
        torch_pad = tuple(v for p, o in zip(_ntuple(tp, nd), op) for v in (p, p - o))
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
    # the window's rank: torch keeps a 1-D pool's kernel_size as a 1-tuple, (25,), where MindSpore keeps the int 25
    ks = t.get("kernel_size")
    n = len(ks) if isinstance(ks, (tuple, list)) else (
        len(m["kernel_size"]) if isinstance(m.get("kernel_size"), (tuple, list)) else 2)
    if "kernel_size" in m and _ntuple(ks, n) != _ntuple(m["kernel_size"], n):
        problems.append(f"kernel_size torch={t.get('kernel_size')!r} MindSpore={m['kernel_size']!r}")
    tp, mp = t.get("padding", 0), m.get("padding", 0)
    if "padding" in m and _ntuple(tp, n) != _ntuple(mp, n) and not (isinstance(mp, tuple) and len(mp) == 2 * n):
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
    tv, mv = t.get("dim"), m.get("axis", m.get("dim"))  # mindspore.nn.Softmax's axis; mindport's Softmax keeps dim
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
