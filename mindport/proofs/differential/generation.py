"""The cases of one entry (:func:`cases`): argument sets, call forms and input variants derived from the entry's torch
signature, its example and its ``example.sweep`` hints; and what a case and its outcome are."""
from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from mindport.mappings import Entry, Registry
from mindport.proofs.function import _SPEC, _bind_example

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


def render_arguments(params, bound: dict[str, str], extra: list[str], style: str) -> str:
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
            args = render_arguments(params, bound, extra, style)
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
            rest_args = render_arguments(params[1:], rest, extra, "positional")
            if method_entry is not None and method_entry.supported:
                add(f"{label}/method", _snippet_function(entry, inputs, f"    return {receiver}.{leaf}({rest_args})\n"),
                    tuple(inputs))
            names = tuple(inputs)
        else:
            receiver, rest_args, names = "self_", render_arguments(params, bound, extra, "positional"), ("self_", *inputs)
        if inplace_entry is not None and inplace_entry.supported:
            add(f"{label}/inplace", _snippet_function(
                entry, list(names), f"    result = {receiver}.{leaf}_({rest_args})\n    return result, {receiver}\n"),
                names)
    # out=: the converter must convert it exactly or flag it.
    if entry.kind == "function" and any(p.name == "out" for p in params):
        bound, extra = _bind_example(entry)
        first = next((s for s in bound.values() if s in inputs), None)
        if first is not None and not extra:
            args = render_arguments(params, bound, extra, "positional")
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
