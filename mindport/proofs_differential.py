"""Differential tests of the mapping tables: every entry beyond its one example.

For one entry, :func:`cases` derives many torch calls from the entry's torch signature, its example and the small
hints in ``example.sweep`` (data, never code):

* argument sets: the example as written; every optional argument unset, spelled out at its default, and set to
  other values (bools flipped, ``dim`` 0/-1, ``reduction`` 'none'/'sum'/'mean', a numeric default moved, and the
  entry's ``sweep.args`` alternatives); each rendered positionally and with keywords;
* forms: the function, the Tensor method of the same name, the in-place method (``x.name_(...)``) and the ``out=``
  variant where they exist; layers are built with the argument set and called on the example's inputs;
* inputs: the example's tensors as bool, int32, int64, float16, float32, float64 and complex64, and shaped 0-d, empty,
  broadcasting and non-contiguous.

:func:`run_case` converts the torch snippet with the real converter (``mindport.migrator.convert_source``), runs both
frameworks on the same inputs and compares values, dtypes, shapes and the inputs afterwards (in-place effects). A call
torch itself rejects is not a case; a call the converter flags (``# mindport: MP1xx``) is "flagged", which is the
honest outcome for what has no equivalent. Float16 results are compared with torch's float32 result on the same
values, within the entry's ``sweep.half_rtol``/``half_atol`` (default 1e-2 / 1e-3).

Outcomes (:class:`Outcome.kind`): ``pass``, ``rejected`` (torch raised: not a case), ``flagged``, and the mismatches:
``value``, ``dtype``, ``shape``, ``count`` (number of outputs), ``inplace`` (an input changed differently),
``ms_error`` (only MindSpore raised) and ``convert_error`` (the converter itself failed).

Used by ``tests/mappings/test_differential.py`` (a seeded sample per entry) and ``benchmarks/differential_sweep.py``
(the full sweep).
"""
from __future__ import annotations

import ast
import contextlib
import io
import re
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from mindport.mappings import Entry, Registry
from mindport.proofs import _SPEC, _bind_example, _flatten, _load, make_input

MISMATCH_KINDS = ("value", "dtype", "shape", "count", "inplace", "ms_error", "convert_error", "crash")
SILENT_KINDS = ("value", "dtype", "shape", "count", "inplace", "convert_error")  # ms_error is loud
DTYPES = ("float32", "float64", "float16", "int64", "int32", "bool", "complex64")
SHAPES = ("zero_d", "empty", "broadcast", "noncontiguous")
HALF_RTOL, HALF_ATOL = 1e-2, 1e-3
# Arguments whose other values say nothing about the mapping (placement, memory, RNG, autograd bookkeeping).
_NO_ALTERNATIVES = {"out", "device", "layout", "pin_memory", "memory_format", "generator", "requires_grad",
                    "names", "non_blocking", "_stacklevel", "size_average", "reduce"}
_STRING_ALTERNATIVES = {
    "reduction": ("'none'", "'sum'", "'mean'"),
    "padding_mode": ("'reflect'", "'replicate'", "'circular'"),
    "approximate": ("'tanh'",),
    "nonlinearity": ("'relu'",),
    "rounding_mode": ("'trunc'", "'floor'"),
    "norm": ("'forward'", "'ortho'"),
    "side": ("'right'",),
    "mode": ("'bilinear'", "'nearest'"),
}


@dataclass(frozen=True)
class Case:
    """One torch snippet (``run(...)``, or ``build()`` for layers) and the inputs it is called with."""

    entry: str  # the entry's torch name
    label: str  # what varies: "args:dim=-1/keyword", "form:inplace", ...
    torch_code: str
    specs: tuple  # ((name, spec), ...) in call order; "self_" is a method's receiver
    call: tuple  # layers: the forward call's input names
    variant: str  # "float32", "zero_d", "noncontiguous", ...
    layer: bool = False
    train: bool = False
    compare: str = "values"
    rtol: float = 1e-5
    atol: float = 1e-6
    half_rtol: float = HALF_RTOL
    half_atol: float = HALF_ATOL
    known: str = ""  # sweep.known[variant]: why MindSpore differs on this input variant (documented, still counted)


@dataclass
class Outcome:
    kind: str
    detail: str = ""
    ms_code: str = ""
    known: str = ""  # the entry's sweep.known reason for this input variant, when it has one

    @property
    def mismatch(self) -> bool:
        return self.kind in MISMATCH_KINDS


# ------------------------------------------------------------------------------------------------- generation


def _render(params, bound: dict[str, str], extra: list[str], style: str) -> str:
    """Argument source: ``positional`` fills positional parameters in order while they are all given."""
    bound = dict(bound)
    parts: list[str] = []
    if style == "positional":
        for p in params:
            if p.kind != "positional" or p.name not in bound:
                break
            parts.append(bound.pop(p.name))
        parts.extend(extra)
    elif extra:
        return ""
    parts.extend(f"{n}={s}" for n, s in bound.items())
    return ", ".join(parts)


def _is_number(text: str | None) -> bool:
    try:
        value = ast.literal_eval(text) if text is not None else None
    except (ValueError, SyntaxError):
        return False
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _alternatives(entry: Entry, param, given: str | None) -> list[str]:
    """Other values of an optional argument worth a call: heuristics from its name and default, plus hints."""
    hints = [str(v) for v in (entry.example.sweep.get("args", {}).get(param.name, ()))]
    if param.name in entry.example.sweep.get("fixed", ()):
        return hints  # the entry says why other values are not comparable (e.g. topk's sorted=False order)
    if param.name in _NO_ALTERNATIVES:
        return hints
    out: list[str] = list(hints)
    default = param.default
    current = given if given is not None else default
    if current in ("True", "False"):
        out.append("False" if current == "True" else "True")
    elif param.name in ("dim", "axis") and (current == "None" or _is_number(current)):
        out += ["0", "-1"]
    elif param.name in _STRING_ALTERNATIVES:
        out += [v for v in _STRING_ALTERNATIVES[param.name] if v != current]
    elif param.name == "dtype" and current == "None":
        out += ["torch.float64"]
    elif _is_number(current) and param.name not in ("dim", "axis"):
        value = ast.literal_eval(current)
        if isinstance(value, int):
            out.append(repr(value + 1))
        else:
            out.append(repr(round(value * 0.5 if value else 0.25, 6)))
    seen, unique = set(), []
    for v in out:
        if v != current and v not in seen:
            seen.add(v)
            unique.append(v)
    return unique


def _argument_sets(entry: Entry) -> list[tuple[str, dict[str, str], list[str]]]:
    """(label, bound arguments, extra varargs): the example, then each optional argument unset/default/other."""
    bound, extra = _bind_example(entry)
    sets = [("example", bound, extra)]
    for p in entry.signature or ():
        if p.kind not in ("positional", "keyword_only") or p.default is None:
            continue
        given = bound.get(p.name)
        if given is not None:
            sets.append((f"unset:{p.name}", {n: s for n, s in bound.items() if n != p.name}, extra))
        elif p.name not in _NO_ALTERNATIVES:
            sets.append((f"default:{p.name}", {**bound, p.name: p.default}, extra))
        for alt in _alternatives(entry, p, given):
            sets.append((f"{p.name}={alt}", {**bound, p.name: alt}, extra))
    return sets


def _snippet_function(entry: Entry, names: list[str], body: str) -> str:
    return f"import torch\n\n\ndef run({', '.join(names)}):\n{body}"


def _forms(entry: Entry, registry: Registry | None) -> list[tuple[str, str, tuple[str, ...]]]:
    """(label, torch code, input names in call order) for every argument set, style and form."""
    ex = entry.example
    params = list(entry.signature or ())
    inputs = list(ex.inputs) + [n for n in ex.sweep.get("inputs", {}) if n not in ex.inputs]
    leaf = entry.torch.rsplit(".", 1)[1]
    out: list[tuple[str, str, tuple[str, ...]]] = []
    seen: set[str] = set()

    def add(label: str, code: str, names: tuple[str, ...]) -> None:
        if code not in seen:
            seen.add(code)
            out.append((label, code, names))

    method_entry = inplace_entry = None
    if registry is not None and entry.kind in ("function", "method") and not leaf.endswith("_"):
        method_entry = registry.lookup(f"torch.Tensor.{leaf}") if entry.kind == "function" else None
        inplace_entry = registry.lookup(f"torch.Tensor.{leaf}_")
    for label, bound, extra in _argument_sets(entry):
        for style in ("positional", "keyword"):
            args = _render(params, bound, extra, style)
            if style == "keyword" and extra:
                continue
            tag = f"{label}/{style}"
            if entry.kind == "layer":
                add(tag, f"import torch\n\n\ndef build():\n    return {entry.torch}({args})\n", tuple(inputs))
            elif entry.kind == "method":
                add(tag, _snippet_function(entry, ["self_", *inputs], f"    return self_.{leaf}({args})\n"),
                    ("self_", *inputs))
            else:
                add(tag, _snippet_function(entry, inputs, f"    return {entry.torch}({args})\n"), tuple(inputs))
        if entry.kind == "layer" or not params:
            continue
        # The method and in-place forms: the first argument is the receiver (it must be one of the inputs).
        if entry.kind == "function":
            first = params[0].name
            receiver = bound.get(first)
            if receiver not in inputs:
                continue
            rest = {n: s for n, s in bound.items() if n != first}
            rest_args = _render(params[1:], rest, extra, "positional")
            if method_entry is not None and method_entry.supported:
                add(f"{label}/method", _snippet_function(entry, inputs, f"    return {receiver}.{leaf}({rest_args})\n"),
                    tuple(inputs))
            names = tuple(inputs)
        else:
            receiver, rest_args, names = "self_", _render(params, bound, extra, "positional"), ("self_", *inputs)
        if inplace_entry is not None and inplace_entry.supported:
            add(f"{label}/inplace", _snippet_function(
                entry, list(names), f"    result = {receiver}.{leaf}_({rest_args})\n    return result, {receiver}\n"),
                names)
    # out=: the converter must convert it exactly or flag it.
    if entry.kind == "function" and any(p.name == "out" for p in params):
        bound, extra = _bind_example(entry)
        first = next((s for s in bound.values() if s in inputs), None)
        if first is not None and not extra:
            args = _render(params, bound, extra, "positional")
            add("example/out", _snippet_function(
                entry, inputs, f"    o = torch.empty(0, dtype={first}.dtype)\n"
                               f"    result = {entry.torch}({args}, out=o)\n    return result, o\n"), tuple(inputs))
    return out


def _spec_kind(spec: str) -> str:
    match = _SPEC.match(spec.replace(" ", ""))
    return match.group(1) if match else ""


def _variants(entry: Entry, specs: dict[str, str]) -> list[str]:
    """The input variants that apply: dtypes when some input is a float tensor, shapes when some is a tensor."""
    floats = [n for n, s in specs.items() if _spec_kind(s) in ("randn", "rand", "randpos", "randsign")]
    tensors = [n for n, s in specs.items() if _spec_kind(s) not in ("scalar", "")]
    restrict = entry.example.sweep.get("variants")
    out = ["float32"] if floats or not tensors else ["base"]
    if floats:
        out += [d for d in DTYPES if d != "float32"]
    elif any(_spec_kind(specs[n]) == "randint" for n in tensors):
        out += ["int32"]
    if tensors:
        out += list(SHAPES)
    if restrict is not None:
        out = [v for v in out if v in restrict or v in ("float32", "base")]
    return out


def cases(entry: Entry, registry: Registry | None = None) -> list[Case]:
    """Every differential case of one entry (empty for entries without a call example)."""
    ex = entry.example
    if ex is None or ex.program or ex.proof or not entry.supported or entry.target("nn") is None:
        return []
    sweep = ex.sweep
    specs = dict(ex.inputs)
    for name, spec in sweep.get("inputs", {}).items():
        specs.setdefault(name, spec)
    base = dict(rtol=ex.rtol, atol=ex.atol, compare=ex.compare,
                half_rtol=float(sweep.get("half_rtol", HALF_RTOL)), half_atol=float(sweep.get("half_atol", HALF_ATOL)))
    out: list[Case] = []
    for label, code, names in _forms(entry, registry):
        if entry.kind == "layer":
            call = tuple(n.strip() for n in (ex.call or ",".join(ex.inputs)).split(",") if n.strip())
            case_specs = tuple((n, specs[n]) for n in call)
        else:
            call = ()
            all_specs = {"self_": ex.self, **specs} if entry.kind == "method" else specs
            case_specs = tuple((n, all_specs[n]) for n in names)
        variants = _variants(entry, dict(case_specs))
        if not label.startswith("example/") and len(variants) > 3:
            # Another argument set: its meaning is checked on float32 and two other inputs drawn per label.
            rng = np.random.default_rng(sum(map(ord, label)))
            variants = [variants[0], *(variants[1 + i] for i in sorted(rng.choice(len(variants) - 1, 2, replace=False)))]
        for variant in variants:
            out.append(Case(entry.torch, label, code, case_specs, call, variant, layer=entry.kind == "layer",
                            train=ex.train, known=str(sweep.get("known", {}).get(variant, "")), **base))
    return out


# ------------------------------------------------------------------------------------------------- inputs


def _shape_of(spec: str) -> tuple:
    kind, args_text = _SPEC.match(spec.replace(" ", "")).groups()[:2]
    args = ast.literal_eval(f"({args_text},)") if args_text else ()
    return tuple(args[2]) if kind == "randint" else tuple(args)


def _with_shape(spec: str, shape: tuple) -> str:
    match = _SPEC.match(spec.replace(" ", ""))
    kind, args_text, dtype = match.groups()
    suffix = f":{dtype}" if dtype else ""
    if kind == "randint":
        low, high, _ = ast.literal_eval(f"({args_text},)")
        return f"randint({low}, {high}, {tuple(shape)!r}){suffix}"
    return f"{kind}({', '.join(map(str, shape))}){suffix}"


def _int_values(kind: str, shape, rng) -> np.ndarray:
    """Small integers, distinct where the size allows (ties make sort/topk/kthvalue indices implementation-defined)."""
    n = int(np.prod(shape)) if shape else 1
    if kind == "randpos":
        pool = np.arange(1, max(5, n + 1))
    elif kind == "rand":
        pool = np.arange(0, max(4, n))
    else:
        pool = np.arange(-max(5, (n + 1) // 2), max(6, (n + 1) // 2 + 1))
    return rng.permutation(pool)[:n].reshape(shape) if n <= len(pool) else rng.choice(pool, size=shape)


def make_inputs(case: Case, seed: int = 0) -> tuple[dict[str, object], bool]:
    """(name -> numpy array or Python value, non-contiguous?) for a case's variant."""
    rng = np.random.default_rng(seed)
    specs = dict(case.specs)
    tensor_names = [n for n, s in specs.items() if _spec_kind(s) not in ("scalar", "")]
    float_names = [n for n in tensor_names if _spec_kind(specs[n]) in ("randn", "rand", "randpos", "randsign")]
    variant = case.variant
    if variant in ("zero_d", "empty", "broadcast"):
        shapes = {n: _shape_of(specs[n]) for n in tensor_names}
        if variant == "zero_d":
            for n in float_names:
                specs[n] = _with_shape(specs[n], ())
        elif variant == "empty":
            first = next((shapes[n] for n in tensor_names if shapes[n]), None)
            for n in tensor_names:
                if first and shapes[n] and shapes[n][0] == first[0]:
                    specs[n] = _with_shape(specs[n], (0, *shapes[n][1:]))
        else:
            same = [n for n in float_names if shapes[n] and shapes[n] == shapes[float_names[0]]]
            if len(same) >= 2:
                shape = shapes[same[1]]
                specs[same[1]] = _with_shape(specs[same[1]], shape[1:] if len(shape) >= 2 else (1,))
            elif same:
                shape = shapes[same[0]]
                specs[same[0]] = _with_shape(specs[same[0]], (1, *shape[1:]))
    arrays = {}
    for name, spec in specs.items():
        value = make_input(spec, rng)
        kind = _spec_kind(spec)
        if name in float_names and variant in DTYPES and variant != "float32":
            shape = np.shape(value)
            if variant == "bool":
                value = rng.random(shape) < 0.5
            elif variant.startswith("int"):
                value = _int_values(kind, shape, rng).astype(variant)
            elif variant == "complex64":
                value = (value + 1j * make_input(spec, rng)).astype(np.complex64)
            else:
                value = value.astype(variant)
        elif kind == "randint" and variant == "int32":
            value = value.astype(np.int32)
        arrays[name] = value
    return arrays, variant == "noncontiguous"


# ------------------------------------------------------------------------------------------------- running


def _to_numpy(value):
    if hasattr(value, "detach"):
        value = value.detach().resolve_conj().resolve_neg()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return np.asarray(value)


def _torch_value(a, noncontiguous: bool):
    import torch

    if not isinstance(a, np.ndarray):
        return a
    if noncontiguous and a.ndim >= 2:
        return torch.tensor(np.ascontiguousarray(a.swapaxes(-1, -2))).transpose(-1, -2)
    return torch.tensor(a)


def _ms_value(a, noncontiguous: bool):
    import mindspore as ms

    if not isinstance(a, np.ndarray):
        return a
    if noncontiguous and a.ndim >= 2:
        return ms.Tensor(np.ascontiguousarray(a.swapaxes(-1, -2))).swapaxes(-1, -2)
    return ms.Tensor(a.copy())


def _half_reference(case: Case, t_mod, arrays: dict, noncontiguous: bool):
    """torch's float32 result on the same (float16) values: the reference float16 results are compared with."""
    import torch

    up = {n: a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float16 else a
          for n, a in arrays.items()}
    with torch.no_grad():
        return _run_torch(case, t_mod, up, noncontiguous)[0]


def _run_torch(case: Case, t_mod, arrays, noncontiguous):
    import torch

    if case.layer:
        state = torch.random.get_rng_state()
        torch.manual_seed(0)  # the same initial weights in every run
        layer = t_mod.build()
        torch.random.set_rng_state(state)
        layer.train(case.train)
        args = [_torch_value(arrays[n], noncontiguous) for n in case.call]
        if any(isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in args):
            layer = layer.double()
        elif any(isinstance(a, torch.Tensor) and a.dtype == torch.float16 for a in args):
            layer = layer.half()
        with torch.no_grad():
            return layer(*args), args, layer
    args = [_torch_value(arrays[n], noncontiguous) for n, _ in case.specs]
    with torch.no_grad():
        return t_mod.run(*args), args, None


def _run_ms(case: Case, m_mod, arrays, noncontiguous, t_layer):
    if case.layer:
        from mindport.migrator.weights import transfer_weights

        layer = m_mod.build()
        layer.set_train(case.train)
        if t_layer is not None:
            state = {k: v.float() if v.is_floating_point() else v for k, v in t_layer.state_dict().items()}
            if state:
                transfer_weights(state, layer)
        args = [_ms_value(arrays[n], noncontiguous) for n in case.call]
        dtypes = {str(a.dtype) for a in args if hasattr(a, "asnumpy")}
        if "Float64" in dtypes or "Float16" in dtypes:  # torch's layer.double() / .half()
            import mindspore as ms

            dtype = ms.float64 if "Float64" in dtypes else ms.float16
            for p in layer.get_parameters():
                if p.dtype in (ms.float32, ms.float64, ms.float16):
                    p.set_dtype(dtype)
        return layer(*args), args
    args = [_ms_value(arrays[n], noncontiguous) for n, _ in case.specs]
    return m_mod.run(*args), args


_CONVERTED: dict[str, tuple[str, list[str]]] = {}


def convert(torch_code: str) -> tuple[str, list[str]]:
    """(MindSpore code, diagnostics) from the real converter; memoised per snippet."""
    if torch_code not in _CONVERTED:
        from mindport.migrator import convert_source

        result = convert_source(torch_code, "<differential>")
        _CONVERTED[torch_code] = (result.code, [d.format() for d in result.diagnostics])
    return _CONVERTED[torch_code]


def _compare(case: Case, t_out, m_out, half_ref) -> Outcome | None:
    t_leaves, m_leaves = _flatten(t_out), _flatten(m_out)
    if len(t_leaves) != len(m_leaves):
        return Outcome("count", f"torch returned {len(t_leaves)} values, MindSpore {len(m_leaves)}")
    ref_leaves = _flatten(half_ref) if half_ref is not None else [None] * len(t_leaves)
    for i, (t, m, r) in enumerate(zip(t_leaves, m_leaves, ref_leaves)):
        t, m = _to_numpy(t), _to_numpy(m)
        if t.shape != m.shape:
            return Outcome("shape", f"output {i}: shape {t.shape} (torch) != {m.shape} (MindSpore)")
        if t.dtype != m.dtype and not (t.dtype.kind in "US" and m.dtype.kind in "US"):
            return Outcome("dtype", f"output {i}: dtype {t.dtype} (torch) != {m.dtype} (MindSpore)")
        if case.compare == "shape" or t.size == 0:
            continue
        if t.dtype.kind in "USO" or m.dtype.kind in "USO":  # strings (x.type()), Python objects
            if not np.array_equal(t, m):
                return Outcome("value", f"output {i}: {t!r} (torch) != {m!r} (MindSpore)")
            continue
        rtol, atol = case.rtol, case.atol
        if t.dtype in (np.float32, np.complex64) and m.dtype in (np.float32, np.complex64):
            atol = max(atol, 1e-5)  # an example's tolerance may be tighter than float32 arithmetic on other inputs
        if t.dtype == np.float16 or case.variant == "float16":
            if r is not None and t.dtype.kind in "fc":  # an int/bool result (element_size, allclose) is torch's own
                r = _to_numpy(r)
                if r.shape == t.shape:
                    t = r
            rtol, atol = max(rtol, case.half_rtol), max(atol, case.half_atol)
        problem = values_differ(t, m, rtol, atol)
        if problem:
            return Outcome("value", f"output {i}: {problem}")
    return None


def values_differ(t: np.ndarray, m: np.ndarray, rtol: float, atol: float) -> str:
    """'' when equal within tolerance (NaN and Inf positions must agree), else what differs."""
    if np.iscomplexobj(t) or np.iscomplexobj(m):
        t, m = np.stack([np.real(t), np.imag(t)]), np.stack([np.real(m), np.imag(m)])
    tf, mf = t.astype(np.float64), m.astype(np.float64)
    if not np.array_equal(np.isnan(tf), np.isnan(mf)):
        return "NaN positions differ"
    if not np.array_equal(np.isposinf(tf), np.isposinf(mf)) or not np.array_equal(np.isneginf(tf), np.isneginf(mf)):
        return "Inf positions differ"
    finite = np.isfinite(tf)
    if finite.any() and not np.allclose(mf[finite], tf[finite], rtol=rtol, atol=atol):
        diff = np.abs(tf[finite] - mf[finite])
        return f"max abs diff {diff.max():.3g} exceeds rtol={rtol:g} atol={atol:g}"
    return ""


def _random(first, second) -> bool:
    """Do two torch runs under different seeds differ (a random operation, or an argument that makes it one)?"""
    a, b = _flatten(first), _flatten(second)
    for x, y in zip(a, b):
        x, y = _to_numpy(x), _to_numpy(y)
        if x.shape == y.shape and x.dtype == y.dtype and x.size and x.dtype != object \
                and not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return True
    return False


_FLAG = re.compile(r"# mindport: (MP\d+)")


def run_case(case: Case, seed: int = 0, memo: dict | None = None) -> Outcome:
    """Convert, run both frameworks, compare. Never raises for a framework's error: that is an outcome.

    ``memo``: outcomes by (MindSpore code, inputs): two call styles that convert to the same code run once."""
    return _run_case(case, seed, memo)


def _run_case(case: Case, seed: int, memo: dict | None) -> Outcome:
    import torch

    arrays, noncontiguous = make_inputs(case, seed)
    t_mod = _load(case.torch_code, "torch_snippet")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(1)
            t_out, t_args, t_layer = _run_torch(case, t_mod, arrays, noncontiguous)
            if case.compare != "shape":
                torch.manual_seed(2)
                again = _run_torch(case, t_mod, arrays, noncontiguous)
                if _random(t_out, again[0]) or _random(t_args, again[1]):
                    case = replace(case, compare="shape")  # a random draw: compare shapes and dtypes
    except Exception as exc:  # noqa: BLE001 - torch rejects the call: not a case
        return Outcome("rejected", f"{type(exc).__name__}: {str(exc)[:200]}")
    try:
        ms_code, diagnostics = convert(case.torch_code)
    except Exception as exc:  # noqa: BLE001
        return Outcome("convert_error", f"{type(exc).__name__}: {exc}")
    if diagnostics:
        return Outcome("flagged", "; ".join(diagnostics), ms_code)
    key = (ms_code, case.variant, case.specs, case.call, case.train, seed)
    if memo is not None and key in memo:
        return memo[key]
    outcome = _run_converted(case, ms_code, t_mod, t_out, t_args, t_layer, arrays, noncontiguous)
    if memo is not None:
        memo[key] = outcome
    return outcome


def _run_converted(case, ms_code, t_mod, t_out, t_args, t_layer, arrays, noncontiguous) -> Outcome:
    import torch

    half_ref = None
    if case.variant == "float16" and case.compare != "shape":
        try:
            half_ref = _half_reference(case, t_mod, arrays, noncontiguous)
        except Exception:  # noqa: BLE001 - no float32 reference: compare with torch's float16 result
            half_ref = None
    try:
        m_mod = _load(ms_code, "ms_snippet")
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m_out, m_args = _run_ms(case, m_mod, arrays, noncontiguous, t_layer)
            m_out = [_to_numpy(leaf) for leaf in _flatten(m_out)]  # MindSpore raises some errors on first read
    except Exception as exc:  # noqa: BLE001
        text = str(exc).split("\n")[0][:300]
        return Outcome("ms_error", f"{type(exc).__name__}: {text}", ms_code)
    try:
        problem = _compare(case, t_out, m_out, half_ref)
    except Exception as exc:  # noqa: BLE001 - an output that is not array-like on one side
        problem = Outcome("value", f"outputs not comparable: {type(exc).__name__}: {exc}")
    if problem is not None:
        problem.ms_code = ms_code
        return problem
    for (name, _), t_arg, m_arg in zip(case.specs if not case.layer else [(n, None) for n in case.call],
                                        t_args, m_args):
        if isinstance(t_arg, torch.Tensor) and hasattr(m_arg, "asnumpy"):
            t_after, m_after = _to_numpy(t_arg), _to_numpy(m_arg)
            if t_after.shape != m_after.shape:
                return Outcome("inplace", f"input {name}: shape after the call {t_after.shape} (torch) != "
                               f"{m_after.shape} (MindSpore)", ms_code)
            if t_after.dtype != m_after.dtype:
                return Outcome("inplace", f"input {name}: dtype after the call {t_after.dtype} (torch) != "
                               f"{m_after.dtype} (MindSpore)", ms_code)
            tol = (case.half_rtol, case.half_atol) if t_after.dtype == np.float16 else (case.rtol, case.atol)
            if case.compare == "shape":  # a random draw: the input must change in both or in neither
                original = arrays[name]
                t_changed = not np.array_equal(t_after, original, equal_nan=original.dtype.kind in "fc")
                m_changed = not np.array_equal(m_after, original, equal_nan=original.dtype.kind in "fc")
                if t_changed != m_changed:
                    what = "changed by torch, not by MindSpore" if t_changed else "changed by MindSpore, not by torch"
                    return Outcome("inplace", f"input {name} after the call: {what}", ms_code)
                continue
            if t_after.size and values_differ(t_after, m_after.astype(t_after.dtype), *tol):
                changed = not np.array_equal(t_after, arrays[name], equal_nan=t_after.dtype.kind in "fc")
                what = "changed by torch, not by MindSpore" if changed else "changed by MindSpore, not by torch"
                return Outcome("inplace", f"input {name} after the call: {what}", ms_code)
    return Outcome("pass", "", ms_code)


@dataclass
class EntryReport:
    entry: str
    outcomes: list = field(default_factory=list)  # (label, variant, kind, detail)


def sweep_entry(entry: Entry, registry: Registry, limit: int | None = None, seed: int = 0,
                known: dict | None = None, progress=None) -> EntryReport:
    """All (or ``limit`` seeded) cases of one entry. ``known``: case index -> outcome tuple already had (from a worker
    process that died on a later case; the case that killed it is known as a ``crash``): not run again.
    ``progress(i, outcome)`` is called before case ``i`` runs (outcome None) and after."""
    report = EntryReport(entry.torch)
    all_cases = cases(entry, registry)
    if limit is not None and len(all_cases) > limit:
        rng = np.random.default_rng(seed)
        picked = sorted(rng.choice(len(all_cases), size=limit, replace=False))
        all_cases = [all_cases[i] for i in picked]
    memo: dict = {}
    for i, case in enumerate(all_cases):
        if known and i in known:
            label, variant, kind, detail = known[i]
            report.outcomes.append((case.label, case.variant, kind, detail) if label == "*" else
                                   (label, variant, kind, detail))
            continue
        if progress is not None:
            progress(i, None)
        outcome = run_case(case, seed, memo)
        kind = outcome.kind
        if case.known and outcome.mismatch:
            kind = f"known:{kind}"  # documented in the entry (sweep.known): counted apart, not hidden
        report.outcomes.append((case.label, case.variant, kind, outcome.detail))
        if progress is not None:
            progress(i, report.outcomes[-1])
    return report
