"""Argument forms of torch.Tensor method calls, enumerated from the mapping tables and proven in an ``nn.Module``.

For every ``torch.Tensor.<name>`` method entry with a call example, :func:`forms` writes the ways model code spells the
same call (the *argument forms*), derived from the entry's torch signature and its example, never listed by hand:

* sizes and dims: one int list spread out, as a tuple, as a list, as a ``torch.Size``, starred from the receiver's
  shape (``x.view(*x.shape[:2], -1)``), and by keyword where torch takes it (``x.view(size=...)`` is not one);
* ints read from the receiver: a size literal equal to one of the receiver's sizes written ``x.shape[i]``,
  ``x.size(i)``, and through a name bound to the shape (``s = x.shape; x.view(s[0], -1)``);
* dims: the negative spelling of a positive dim and back, a one-element tuple or list for one dim where torch takes
  a dim list (``x.sum((1,))``), two dims as a tuple/list/negatives (``x.sum(dim=(1, 2))``), ``dim=None`` written out;
* ``keepdim`` positional and by keyword; every bound argument by keyword;
* a ``dtype`` argument: ``torch.float64``/``torch.float16``/``torch.int64``, positionally and by keyword;
* receivers: the example's tensor, and the same call on an int64 and a bool receiver, a 0-d and an empty one.

torch decides which forms exist: a form torch rejects is not a case. Each remaining form is a tiny ``nn.Module``
whose ``forward`` makes the call; all forms of one entry are converted together by the real converter
(:func:`mindport.migrator.convert_source`), and each is run in both frameworks on the same inputs (PyNative; a sample
also in GRAPH_MODE, :func:`run_graph`). Outcomes, per form:

``pass``      values, dtypes and shapes equal torch's (in-place calls: the receiver afterwards too);
``flagged``   the converter flagged the line (the call keeps torch's meaning and says why): honest, not a defect;
``loud``      MindSpore raised on the converted code (a defect, but not a silent one);
``silent``    the converted call ran and differs from torch (value, dtype, shape, number of outputs, receiver).

Used by ``tests/mappings/test_tensor_method_forms.py`` (every form, one test per method family) and by
``python -m mindport.proofs.forms`` (the table per family; ``--graph N`` also runs N forms in GRAPH_MODE).
"""
from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from mindport.mappings import Entry, Registry
from mindport.proofs.differential.generation import render_arguments
from mindport.proofs.function import _SPEC, _bind_example, make_input

DIM_NAMES = frozenset({"dim", "dims", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source", "destination",
                       "axis", "axis0", "axis1"})
DTYPE_ALTERNATIVES = ("torch.float64", "torch.float16", "torch.int64")
RECEIVERS = ("int64", "bool", "zero_d", "empty")
KINDS = ("pass", "flagged", "loud", "silent")
# in-place calls that grow the receiver: torch leaves the new elements uninitialised, so on a receiver with fewer
# elements than the result (0-d, empty) only shapes and dtypes are comparable
GROWS = frozenset({"torch.Tensor.resize_", "torch.Tensor.resize_as_"})


@dataclass(frozen=True)
class Form:
    entry: str  # torch.Tensor.<name>
    family: str
    label: str  # what the form varies: "example", "neg:dim", "tuple:size", ...
    args: str  # the call's argument source
    prelude: tuple = ()  # lines before the call (a name bound to the shape)
    receiver: str = "example"  # "example" or one of RECEIVERS
    rtol: float = 1e-5
    atol: float = 1e-6
    compare: str = "values"
    self_spec: str = ""  # the receiver's input spec when not the example's (the written forms, WRITTEN)

    @property
    def call(self) -> str:
        return f"x.{self.entry.rsplit('.', 1)[1]}({self.args})"

    @property
    def key(self) -> str:
        receiver = self.receiver if self.receiver != "example" else self.self_spec
        return f"{self.entry[len('torch.Tensor.'):]}({self.args})" + (f" [{receiver}]" if receiver else "")


@dataclass
class Result:
    form: Form
    kind: str  # one of KINDS, or "rejected" (torch raised: not a case)
    detail: str = ""
    ms_line: str = ""


def family(entry: Entry) -> str:
    """The method family an entry belongs to, by the parameters of its torch signature."""
    names = {p.name for p in entry.signature or ()}
    varargs = [p for p in entry.signature or () if p.kind == "var_positional"]
    name = entry.torch.rsplit(".", 1)[1]
    if name.endswith("_") and not name.startswith("new_"):
        return "inplace"
    if varargs or names & {"size", "shape", "sizes", "repeats"} or name.startswith("new_"):
        return "sizes"
    if "keepdim" in names:
        return "reductions"
    if names & DIM_NAMES:
        return "dims"
    if "dtype" in names or name in ("to", "type", "type_as", "view_as", "long", "int", "float", "double", "half",
                                    "bool", "byte", "char", "short", "bfloat16"):
        return "dtypes"
    return "elementwise"


def _shape(spec: str) -> tuple:
    match = _SPEC.match(spec.replace(" ", ""))
    kind, text, _ = match.groups()
    args = ast.literal_eval(f"({text},)") if text else ()
    if kind == "randint":
        return tuple(args[2])
    if kind == "scalar":
        return ()
    return tuple(args)


def _literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _ints(value) -> bool:
    return isinstance(value, (tuple, list)) and bool(value) and \
        all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _render(params, bound: dict, extra: list, keyword: bool = False) -> str:
    """The call's argument source: positional while the parameters are given in order, or all by keyword
    (the differential sweep's renderer)."""
    return render_arguments(params, bound, extra, "keyword" if keyword else "positional")


def _seq(items, kind: str) -> str:
    inner = ", ".join(str(i) for i in items)
    if kind == "tuple":
        return f"({inner},)" if len(items) == 1 else f"({inner})"
    if kind == "list":
        return f"[{inner}]"
    return f"torch.Size([{inner}])"


def _from_shape(items, shape) -> tuple[list[str], list[str]] | None:
    """Int literals equal to one of the receiver's sizes read from it: (``x.shape[i]`` spelling, ``s[i]`` spelling)."""
    by_shape, by_name, changed = [], [], False
    for v in items:
        if _int(v) and v > 1 and v in shape:
            i = shape.index(v)
            by_shape.append(f"x.shape[{i}]")
            by_name.append(f"s[{i}]")
            changed = True
        else:
            by_shape.append(str(v))
            by_name.append(str(v))
    return (by_shape, by_name) if changed else None


def _variants(entry: Entry) -> list[tuple[str, str, tuple]]:
    """(label, argument source, prelude) for every form of one entry's example call."""
    params = list(entry.signature or ())
    by_name = {p.name: p for p in params}
    bound, extra = _bind_example(entry)
    shape = _shape(entry.example.self)
    ndim = len(shape)
    out: list[tuple[str, str, tuple]] = [("example", _render(params, bound, extra), ())]
    varargs = next((p for p in params if p.kind == "var_positional"), None)

    def add(label, new_bound, new_extra=None, prelude=()):
        src = _render(params, new_bound, extra if new_extra is None else new_extra)
        if all(src != s for _, s, p in out if p == prelude):
            out.append((label, src, prelude))

    if bound and not extra and len(bound) > 0:
        kw = _render(params, bound, [], keyword=True)
        if kw and all(kw != s for _, s, _ in out):
            out.append(("keyword", kw, ()))

    # one int list spread out (varargs): as one tuple / list / torch.Size, starred, read from the shape
    if varargs is not None:
        values = [_literal(e) for e in extra]
        if len(extra) == 1 and _ints(values[0]):
            values = list(values[0])
            add("spread:" + varargs.name, bound, [str(v) for v in values])
        if values and all(_int(v) for v in values):
            for kind in ("tuple", "list", "size"):
                add(f"{kind}:{varargs.name}", bound, [_seq(values, kind)])
            sizes = varargs.name.removesuffix("_rest") not in ("dims", "dim")
            if sizes and len(values) >= 2 and values[-1] > 1:
                add(f"minus-one:{varargs.name}", bound, [*[str(v) for v in values[:-1]], "-1"])
            if not sizes and ndim:
                add(f"neg:{varargs.name}", bound, [str(v - ndim if v >= 0 else v) for v in values])
            read = _from_shape(values, shape) if sizes else None
            if read:
                add(f"shape:{varargs.name}", bound, read[0])
                add(f"bound:{varargs.name}", bound, read[1], ("s = x.shape",))
                add(f"tuple-shape:{varargs.name}", bound, [_seq(read[0], "tuple")])
            k = 0
            while sizes and k < min(len(values), ndim) and values[k] == shape[k]:
                k += 1
            if k >= 1:
                add(f"star:{varargs.name}", bound, [f"*x.shape[:{k}]", *[str(v) for v in values[k:]]])
            if varargs.name.removesuffix("_rest") in ("size", "shape", "dims"):
                key = varargs.name.removesuffix("_rest")
                keyed = dict(bound)
                keyed[key] = _seq(values, "tuple")
                add(f"keyword:{key}", keyed, [])
    for name, src in bound.items():
        value = _literal(src)
        p = by_name.get(name)
        if p is None:
            continue
        if name in DIM_NAMES and _int(value) and ndim:
            flipped = value - ndim if value >= 0 else value + ndim
            add(f"neg:{name}", {**bound, name: str(flipped)})
            for kind in ("tuple", "list"):
                add(f"one-{kind}:{name}", {**bound, name: _seq([value], kind)})
        if _ints(value):
            for kind in ("tuple", "list", "size"):
                if kind == "size" and name in DIM_NAMES:
                    continue
                add(f"{kind}:{name}", {**bound, name: _seq(list(value), kind)})
            if name in DIM_NAMES and ndim:
                add(f"neg:{name}", {**bound, name: _seq([v - ndim if v >= 0 else v for v in value], "tuple")})
            else:
                read = _from_shape(list(value), shape)
                if read:
                    add(f"shape:{name}", {**bound, name: _seq(read[0], "tuple")})
                    add(f"bound:{name}", {**bound, name: _seq(read[1], "tuple")}, prelude=("s = x.shape",))
        if _int(value) and name not in DIM_NAMES and value > 1 and value in shape:
            i = shape.index(value)
            add(f"shape:{name}", {**bound, name: f"x.shape[{i}]"})
            add(f"size:{name}", {**bound, name: f"x.size({i})"})
            add(f"bound:{name}", {**bound, name: f"n"}, prelude=(f"n = x.size({i})",))
    # dims not given by the example
    for name in ("dim",):
        p = by_name.get(name)
        if p is None or p.kind == "var_positional":
            continue
        if p.default == "None":
            add(f"none:{name}", {**bound, name: "None"})
        if name not in bound and p.default is not None:
            if p.default != "None":
                add(f"default:{name}", {**bound, name: p.default})
            if ndim >= 2:
                add(f"dim:{name}", {**bound, name: "1"})
                add(f"negdim:{name}", {**bound, name: "-1"})
        if ndim >= 3:
            add(f"two-tuple:{name}", {**bound, name: "(1, 2)"})
            add(f"two-list:{name}", {**bound, name: "[0, 2]"})
            add(f"two-neg:{name}", {**bound, name: "(-1, -2)"})
        elif ndim == 2:
            add(f"two-tuple:{name}", {**bound, name: "(0, 1)"})
            add(f"two-neg:{name}", {**bound, name: "[-1, 0]"})
    if "keepdim" in by_name and ndim:
        dim = bound.get("dim", "1" if ndim >= 2 else "0")
        base = {k: v for k, v in bound.items() if k not in ("dim", "keepdim")}
        for keep in ("True", "False"):
            add(f"keepdim-positional:{keep}", {"dim": dim, "keepdim": keep, **base})
            mixed = f"{_render(params, {'dim': dim, **base}, extra)}, keepdim={keep}"
            if all(mixed != s for _, s, _ in out):
                out.append((f"keepdim-mixed:{keep}", mixed, ()))
            out_kw = _render(params, base, extra)
            kw = f"{out_kw + ', ' if out_kw else ''}dim={dim}, keepdim={keep}"
            if all(kw != s for _, s, _ in out):
                out.append((f"keepdim-keyword:{keep}", kw, ()))
    if "dtype" in by_name:
        p = by_name["dtype"]
        for dtype in DTYPE_ALTERNATIVES:
            add(f"dtype:{dtype}", {**bound, "dtype": dtype})
            if p.kind == "positional" and not extra:
                positional = [q.name for q in params if q.kind == "positional"]
                if positional and positional[0] == "dtype":
                    src = ", ".join([dtype] + [f"{k}={v}" for k, v in bound.items() if k != "dtype"])
                    if all(src != s for _, s, _ in out):
                        out.append((f"dtype-positional:{dtype}", src, ()))
    return out


# Forms model code writes that the example alone does not reach (receiver (2, 3, 4) float32 unless a spec is given):
# sizes read from the receiver and starred, one int where a list is taken, casts by dtype object, dims as lists.
# Each is (method, arguments[, receiver spec[, prelude]]); the generated forms above apply to every entry.
WRITTEN = [
    ("view", "x.size(0), -1"), ("view", "*x.shape[:2], -1"), ("view", "x.shape[0], x.shape[1], -1"),
    ("view", "-1, x.size(-1)"), ("view", "s[0], -1", "", ("s = x.shape",)), ("view", "x.size()"),
    ("view", "-1"), ("view", "x.shape"), ("view", "b, c, -1", "", ("b, c = x.shape[:2]",)),
    ("view", "x.shape[:-1] + (2, 2)"), ("view", "(*x.shape[:-1], 2, 2)"), ("view", "n, -1", "", ("n = x.size(0)",)),
    ("reshape", "x.size(0), -1"), ("reshape", "*x.shape[:-1], 2, 2"), ("reshape", "[-1]"), ("reshape", "-1"),
    ("reshape", "x.shape[0], -1, 2"), ("reshape", "(x.shape[0], -1)"), ("reshape", "shape=(4, -1)"),
    ("permute", "0, 2, 1"), ("permute", "[0, 2, 1]"), ("permute", "(0, 2, 1)"), ("permute", "*[0, 2, 1]"),
    ("permute", "0, -1, -2"), ("permute", "dims=[2, 1, 0]"),
    ("transpose", "1, 2"), ("transpose", "-1, -2"), ("transpose", "dim0=0, dim1=-1"),
    ("repeat", "2", "randn(3)"), ("repeat", "2, 1, 1"), ("repeat", "(2, 1, 1)"), ("repeat", "[1, 2, 1]"),
    ("repeat", "1, 1, 1, 2"), ("repeat", "2, 2", "randn(3)"), ("repeat", "x.size(0), 1, 1"),
    ("repeat", "torch.Size([1, 2, 1])"), ("repeat", "1, x.shape[1], 1"),
    ("expand", "2, 3, 4"), ("expand", "*x.shape"), ("expand", "-1, -1, 4"), ("expand", "x.size()"),
    ("expand", "(2, 3, 4)"), ("expand", "5, 2, 3, 4"), ("expand", "2, 3, 4", "randn(1, 3, 1)"),
    ("expand", "x.size(0), -1, -1"), ("expand", "[5, -1, -1, -1]"), ("expand", "size=(2, 3, 4)"),
    ("expand_as", "x"), ("repeat_interleave", "2"), ("repeat_interleave", "2, dim=1"),
    ("repeat_interleave", "2, -1"), ("tile", "2"), ("tile", "(2,)"), ("tile", "1, 2"), ("tile", "[2, 1, 1, 1]"),
    ("flip", "0"), ("flip", "-1"), ("flip", "[0, 2]"), ("flip", "(1,)"), ("flip", "dims=[1]"), ("flip", "0, 1"),
    ("roll", "1"), ("roll", "1, -1"), ("roll", "(1, 2), (0, 2)"), ("roll", "shifts=1, dims=1"),
    ("roll", "[1, -1], [1, 2]"),
    ("sum", "dim=(1, 2)"), ("sum", "(1, 2)"), ("sum", "[-1]"), ("sum", "-1"), ("sum", "1, keepdim=True"),
    ("sum", "dim=-1, keepdim=True"), ("sum", ""), ("sum", "dim=[0, 1]"), ("sum", "(-2, -1), True"),
    ("sum", "axis=1"), ("sum", "dtype=torch.float64"), ("sum", "-1", "randint(0, 5, (2, 3, 4))"),
    ("sum", "-1", "randbool(2, 3, 4)"), ("sum", "dim=(1, 2)", "randbool(2, 3, 4)"),
    ("mean", "dim=(1, 2)"), ("mean", "(-1, -2), keepdim=True"), ("mean", "[1]"), ("mean", ""),
    ("mean", "-1", "randint(0, 5, (2, 3, 4))"), ("mean", "dtype=torch.float64"), ("mean", "1, True"),
    ("amax", "dim=(1, 2)"), ("amax", "-1"), ("amax", "(0, 1), True"), ("amin", "[1, 2]"), ("amin", "dim=-1"),
    ("std", "dim=(1, 2)"), ("std", "-1, keepdim=True"), ("std", "1, unbiased=False"), ("std", ""),
    ("var", "(1, 2), False"), ("var", "-1, True, True"), ("var", "dim=[0, 2], correction=0"),
    ("prod", "-1"), ("prod", "1, keepdim=True"), ("prod", "dim=1, dtype=torch.float64"),
    ("prod", "-1", "randint(1, 3, (2, 3, 4))"), ("all", "-1", "randbool(2, 3, 4)"), ("any", "dim=1", "randbool(2, 3, 4)"),
    ("all", "", "randbool(2, 3, 4)"), ("any", "(1, 2)", "randbool(2, 3, 4)"), ("all", "dim=-1"),
    ("norm", "dim=-1"), ("norm", "2, -1, True"), ("norm", "p=1, dim=(1, 2)"), ("norm", ""), ("norm", "dim=-1, p=2"),
    ("norm", "p='fro', dim=(1, 2)"), ("logsumexp", "-1"), ("logsumexp", "dim=(1, 2)"), ("logsumexp", "1, True"),
    ("max", ""), ("max", "1"), ("max", "dim=-1"), ("max", "1, keepdim=True"), ("max", "-1, True"),
    ("min", "dim=1"), ("min", ""), ("min", "-1, keepdim=True"), ("max", "1", "randint(0, 9, (2, 3, 4))"),
    ("argmax", ""), ("argmax", "-1"), ("argmax", "dim=1, keepdim=True"), ("argmin", "1"),
    ("argmax", "-1", "randint(0, 9, (2, 3, 4))"), ("topk", "2"), ("topk", "2, dim=1"), ("topk", "k=2, dim=-1, largest=False"),
    ("topk", "2, 1, False, True"), ("sort", "-1"), ("sort", "dim=1, descending=True"), ("argsort", "-1, True"),
    ("softmax", "-1"), ("softmax", "dim=1"), ("softmax", "-1, torch.float64"), ("softmax", "dim=-1, dtype=torch.float64"),
    ("log_softmax", "-1"), ("log_softmax", "dim=1"), ("cumsum", "-1"), ("cumsum", "dim=1"),
    ("cumsum", "0", "randint(0, 5, (2, 3, 4))"), ("cumsum", "-1", "randbool(2, 3, 4)"), ("cumsum", "1, dtype=torch.float64"),
    ("cumprod", "1"), ("cummax", "-1"),
    ("to", "torch.float16"), ("to", "torch.long"), ("to", "dtype=torch.float64"), ("to", "x.dtype"),
    ("to", "torch.int32"), ("to", "'cpu'"), ("to", "'cpu', torch.float64"), ("to", "device='cpu'"),
    ("to", "torch.bool"), ("to", "x.device"), ("to", "torch.float32", "randint(0, 5, (2, 3, 4))"),
    ("to", "torch.float16", "randbool(2, 3, 4)"), ("to", "torch.long", "randbool(2, 3, 4)"),
    ("to", "y", "", ("y = torch.zeros(1, dtype=torch.float64)",)), ("to", "torch.uint8", "randint(0, 5, (2, 3, 4))"),
    ("type", "torch.long"), ("type", "torch.float16"), ("type", "torch.int32"), ("type", "dtype=torch.float64"),
    ("type", "torch.float32", "randint(0, 5, (2, 3, 4))"), ("type", "torch.bool"), ("type", "x.dtype"),
    ("type_as", "y", "", ("y = torch.zeros(1, dtype=torch.int64)",)), ("long", ""), ("float", "", "randbool(2, 3, 4)"),
    ("half", ""), ("double", ""), ("int", ""), ("bool", ""), ("byte", "", "randint(0, 5, (2, 3, 4))"),
    ("new_zeros", "(2, 3)"), ("new_zeros", "2, 3"), ("new_zeros", "x.shape"), ("new_zeros", "x.size()"),
    ("new_zeros", "[2, 3]"), ("new_zeros", "x.shape[:2]"), ("new_zeros", "(2, 3), dtype=torch.long"),
    ("new_zeros", "x.size(0), 1"), ("new_zeros", "3"), ("new_zeros", "()"), ("new_zeros", "x.shape[0]"),
    ("new_ones", "x.shape[:-1]"), ("new_ones", "2, 3, dtype=torch.bool"), ("new_ones", "size=(2,)"),
    ("new_full", "(2, 3), 1.5"), ("new_full", "x.shape, -1.0"), ("new_full", "[2], 7, dtype=torch.long"),
    ("new_full", "(2,), 3", "randint(0, 5, (2, 3, 4))"), ("new_empty", "x.shape"), ("new_empty", "2, 3"),
    ("new_tensor", "[1, 2, 3]"), ("new_tensor", "[1.5, 2.0]"), ("new_tensor", "3"), ("new_tensor", "[1, 2], dtype=torch.float32"),
    ("new_zeros", "(2, 3)", "randint(0, 5, (2, 3, 4))"), ("new_ones", "2", "randbool(2, 3, 4)"),
    ("size", ""), ("size", "0"), ("size", "-1"), ("size", "dim=1"), ("dim", ""), ("ndimension", ""),
    ("numel", ""), ("nelement", ""), ("element_size", ""), ("is_floating_point", ""), ("is_contiguous", ""),
    ("size", "0", "randn(5)"), ("numel", "", "randint(0, 5, (2, 3))"), ("dim", "", "scalar_tensor"),
    ("split", "2, dim=-1"), ("split", "[1, 3], dim=2"), ("split", "2, -1"), ("split", "1"), ("split", "[1, 1]"),
    ("split", "split_size=2, dim=2"), ("chunk", "2, dim=-1"), ("chunk", "3, 1"), ("chunk", "2"),
    ("unbind", ""), ("unbind", "-1"), ("unbind", "dim=1"), ("tensor_split", "2, dim=-1"),
    ("squeeze", "1", "randn(2, 1, 4)"), ("squeeze", "", "randn(2, 1, 4)"), ("squeeze", "-2", "randn(2, 1, 4)"),
    ("squeeze", "dim=1", "randn(2, 1, 4)"), ("squeeze", "(0, 1)", "randn(1, 1, 4)"), ("squeeze", "0"),
    ("squeeze", "-1", "randn(2, 3, 1)"), ("squeeze", "0", "randn(1)"),
    ("unsqueeze", "1"), ("unsqueeze", "-1"), ("unsqueeze", "dim=0"), ("unsqueeze", "0", "scalar_tensor"),
    ("flatten", ""), ("flatten", "1"), ("flatten", "start_dim=1"), ("flatten", "1, -1"), ("flatten", "-2"),
    ("flatten", "0, 1"), ("flatten", "", "scalar_tensor"), ("unflatten", "-1, (2, 2)"), ("unflatten", "2, [2, 2]"),
    ("unflatten", "1, (3, 1)"), ("unflatten", "dim=-1, sizes=(2, -1)"),
    ("movedim", "1, -1"), ("movedim", "(0, 1), (1, 0)"), ("movedim", "source=0, destination=2"), ("moveaxis", "-1, 0"),
    ("swapaxes", "0, 1"), ("swapdims", "-1, 0"),
    ("narrow", "-1, 1, 2"), ("narrow", "1, 0, x.size(1) - 1"), ("select", "1, 0"), ("select", "-1, -1"),
    ("index_select", "-1, i", "", ("i = torch.tensor([0, 2])",)), ("gather", "-1, i", "", ("i = torch.zeros(2, 3, 1, dtype=torch.long)",)),
    ("masked_fill", "x > 0, 0.0"), ("masked_fill", "x > 0, float('-inf')"), ("masked_fill", "x > 0, -1e9"),
    ("masked_fill", "m, 0", "", ("m = x < 0",)), ("masked_fill", "x > 0, 1", "randint(-5, 5, (2, 3, 4))"),
    ("masked_fill", "(x > 0)[:, :1], 0.0"), ("masked_fill", "mask=x > 0, value=2.0"),
    ("masked_fill", "x, True", "randbool(2, 3, 4)"),
    ("clamp", "min=0"), ("clamp", "0, 1"), ("clamp", "max=0.5"), ("clamp", "-1", "randint(-5, 5, (2, 3, 4))"),
    ("clamp", "min=0.5", "randint(-5, 5, (2, 3, 4))"), ("clamp_min", "0.1"), ("clamp_max", "0"),
    ("pow", "2"), ("pow", "0.5", "randpos(2, 3, 4)"), ("pow", "2", "randint(-5, 5, (2, 3, 4))"),
    ("pow", "0.5", "randint(1, 5, (2, 3, 4))"), ("div", "2", "randint(-5, 5, (2, 3, 4))"),
    ("div", "2, rounding_mode='floor'", "randint(-5, 5, (2, 3, 4))"), ("add", "1", "randbool(2, 3, 4)"),
    ("mul", "0.5", "randint(-5, 5, (2, 3, 4))"), ("sub", "x, alpha=2"), ("float", "", "scalar_tensor"),
    ("sum", "", "scalar_tensor"), ("mean", "", "scalar_tensor"), ("item", "", "scalar_tensor"),
    ("tolist", "", "randint(0, 5, (2, 3))"), ("item", "", "randint(0, 5, (1,))"), ("sum", "-1", "empty"),
    ("mean", "0", "empty"), ("view", "-1, 4", "empty"), ("reshape", "0, -1", "empty"), ("max", "-1", "empty"),
    ("flip", "0", "empty"), ("permute", "2, 0, 1", "empty"), ("new_zeros", "x.shape", "empty"),
    ("expand", "2, 0, 3, 4", "empty"), ("repeat", "2, 1, 1", "empty"),
    ("contiguous", ""), ("clone", ""), ("detach", ""), ("cpu", ""), ("numpy", ""),
    ("t", "", "randn(3, 4)"), ("t", "", "randn(4)"),
    ("masked_select", "x > 0"), ("nonzero", ""), ("nonzero", "as_tuple=True"), ("where", "x > 0, 0.0"),
    ("eq", "0", "randint(0, 2, (2, 3, 4))"), ("ne", "x"), ("lt", "0.5"), ("bool", "", "randint(0, 2, (2, 3))"),
    ("all", "", "randint(0, 2, (2, 3))"), ("any", "-1", "randint(0, 2, (2, 3))"), ("sum", "", "randbool(5)"),
    ("long", "", "randbool(2, 3)"), ("float", "", "randint(0, 9, (2, 3))"), ("argmax", "", "randbool(2, 3)"),
]
SPECIAL_SPECS = {"scalar_tensor": "randn()", "empty": "randn(0, 3, 4)"}


def _written(registry: Registry, names=None) -> list[Form]:
    import torch

    out = []
    for item in WRITTEN:
        method, args = item[0], item[1]
        spec = item[2] if len(item) > 2 else ""
        prelude = item[3] if len(item) > 3 else ()
        entry = registry.lookup(f"torch.Tensor.{method}")
        if entry is None or entry.kind != "method" or (names is not None and entry.torch not in names):
            continue
        if not callable(getattr(torch.Tensor, method, None)):
            continue
        example = entry.example
        spec = SPECIAL_SPECS.get(spec, spec) or "randn(2, 3, 4)"
        common = dict(entry=entry.torch, family=family(entry), args=args, prelude=tuple(prelude),
                      rtol=example.rtol if example else 1e-5, atol=example.atol if example else 1e-6,
                      compare=example.compare if example else "values", self_spec=spec, label="written")
        out.append(Form(**common))
        if not spec.startswith(("randint", "randbool")) and spec not in SPECIAL_SPECS.values():
            out += [Form(receiver=r, **common) for r in ("int64", "bool")]
    return out


def forms(registry: Registry, names=None) -> list[Form]:
    """Every form of every ``torch.Tensor`` method entry with a call example (``names``: only these entries)."""
    import torch

    result, seen = [], set()
    for entry in registry:
        if id(entry) in seen or entry.kind != "method" or not entry.torch.startswith("torch.Tensor."):
            continue
        seen.add(id(entry))
        if names is not None and entry.torch not in names:
            continue
        example = entry.example
        if not entry.supported or example is None or example.program or not example.self or entry.signature is None:
            continue
        if not callable(getattr(torch.Tensor, entry.torch.rsplit(".", 1)[1], None)):
            continue
        fam = family(entry)
        renames = _renames(entry)
        for label, args, prelude in _variants(entry):
            args = _rename(args, renames)
            common = dict(entry=entry.torch, family=fam, args=args, prelude=prelude, rtol=example.rtol,
                          atol=example.atol, compare=example.compare)
            result.append(Form(label=label, **common))
            known = example.sweep.get("known", {})
            for receiver in RECEIVERS:
                if receiver in ("zero_d", "empty") and label not in ("example", "keyword"):
                    continue
                if receiver in known:
                    continue  # documented in the entry (sweep.known), counted by the differential sweep
                if receiver in ("zero_d", "empty") and entry.torch in GROWS:
                    result.append(Form(label=label, receiver=receiver, **{**common, "compare": "shape"}))
                    continue
                result.append(Form(label=label, receiver=receiver, **common))
    return result + _written(registry, names)


def _inputs(entry: Entry, form: Form, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    example = entry.example
    arrays = {"x": make_input(form.self_spec or example.self, rng)}
    for name, spec in _extra_inputs(entry, form).items():
        arrays[name] = make_input(spec, rng)
    x = arrays["x"]
    if isinstance(x, np.ndarray):
        if form.receiver == "int64":
            x = np.round(x * 3).astype(np.int64) if x.dtype.kind in "fc" else x.astype(np.int64)
        elif form.receiver == "bool":
            x = x > 0 if x.dtype != bool else x
        elif form.receiver == "zero_d":
            x = x.reshape(-1)[:1].reshape(())
        elif form.receiver == "empty" and x.ndim:
            x = x[:0]
    arrays["x"] = x
    return arrays


_TAKEN = ("x", "s", "n", "torch", "nn")  # the receiver and the names the forms' preludes bind


def _renames(entry: Entry) -> dict:
    """An example input named like the receiver or a prelude name (``x``, ``s``, ``n``) gets another name."""
    return {k: f"{k}_input" for k in entry.example.inputs if k in _TAKEN}


def _rename(args: str, renames: dict) -> str:
    if not renames or not args:
        return args

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.copy_location(ast.Name(renames.get(node.id, node.id), node.ctx), node)

    call = Rename().visit(ast.parse(f"f({args})", mode="eval"))
    return ast.unparse(call)[2:-1]


def _extra_inputs(entry: Entry, form: Form) -> dict:
    """The example's other inputs (``other``, ``index``, ...) the generated forms pass, renamed where they would take
    the receiver's name (:func:`_renames`); none for the written ones."""
    if form.label == "written":
        return {}
    renames = _renames(entry)
    return {renames.get(k, k): spec for k, spec in entry.example.inputs.items()}


def program(entry: Entry, items: list[Form]) -> str:
    """One torch module: a class per form, ``forward(self, x, <inputs>)`` making the call."""
    inputs = ", ".join(["x", *_extra_inputs(entry, items[0])])
    lines = ["import torch", "import torch.nn as nn", ""]
    inplace = entry.torch.endswith("_") and not entry.torch.rsplit(".", 1)[1].startswith("new_")
    for i, form in enumerate(items):
        lines += ["", f"class Form{i}(nn.Module):", f"    def forward(self, {inputs}):"]
        lines += [f"        {line}" for line in form.prelude]
        if inplace:
            lines += [f"        out = {form.call}", "        return out, x"]
        else:
            lines.append(f"        return {form.call}")
        lines.append("")
    return "\n".join(lines) + "\n"


def _flatten(value) -> list:
    if isinstance(value, (tuple, list)) and not hasattr(value, "asnumpy"):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _numpy(value):
    if hasattr(value, "detach"):
        value = value.detach().resolve_conj().resolve_neg()
        return value.float().numpy() if str(value.dtype) == "torch.bfloat16" else value.numpy()
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return value


def compare(form: Form, want, got) -> str:
    """'' when MindSpore's outputs are torch's (values, dtypes, shapes, Python types), else what differs."""
    w, g = _flatten(want), _flatten(got)
    if len(w) != len(g):
        return f"{len(g)} outputs, torch {len(w)}"
    for i, (a, b) in enumerate(zip(w, g)):
        a_tensor, b_tensor = hasattr(a, "detach"), hasattr(b, "asnumpy")
        a, b = _numpy(a), _numpy(b)
        if not a_tensor:
            if b_tensor:
                return f"output {i}: a tensor, torch {type(a).__name__} {a!r}"
            if type(a) is not type(b) and not (isinstance(a, tuple) and isinstance(b, (tuple, list))):
                return f"output {i}: {type(b).__name__} {b!r}, torch {type(a).__name__} {a!r}"
            if np.asarray(a).shape != np.asarray(b).shape or not np.array_equal(np.asarray(a), np.asarray(b),
                                                                                equal_nan=True):
                return f"output {i}: {b!r}, torch {a!r}"
            continue
        if not b_tensor:
            return f"output {i}: {type(b).__name__} {b!r}, torch a tensor"
        if a.shape != b.shape:
            return f"output {i}: shape {b.shape}, torch {a.shape}"
        if a.dtype != b.dtype:
            return f"output {i}: dtype {b.dtype}, torch {a.dtype}"
        if form.compare == "shape" or not a.size:
            continue
        rtol, atol = (max(form.rtol, 1e-2), max(form.atol, 1e-3)) if a.dtype == np.float16 else (form.rtol, form.atol)
        if a.dtype.kind in "fc":
            if not np.allclose(b, a, rtol=rtol, atol=atol, equal_nan=True):
                return f"output {i}: values differ (max |d| {np.nanmax(np.abs(b.astype(np.float64) - a)):.3g})"
        elif not np.array_equal(a, b):
            return f"output {i}: values differ"
    return ""


def _load(code: str, name: str):
    """The program as a module (importable, with its source on disk: MindSpore's graph compiler reads it)."""
    from mindport.proofs.function import _load as load

    return load(code, name, importable=True)


def _call_torch(module, i, arrays):
    import torch

    args = [torch.tensor(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays.values()]
    cls = getattr(module, f"Form{i}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        return cls()(*args)


def _call_ms(module, i, arrays):
    import mindspore as ms

    args = [ms.Tensor(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays.values()]
    cls = getattr(module, f"Form{i}")
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = cls()(*args)
        _ = [_numpy(leaf) for leaf in _flatten(out)]  # MindSpore raises some errors on first read
        return out


def _flush() -> None:
    """Let MindSpore raise any error still pending from an earlier call (PyNative runs kernels asynchronously)."""
    import mindspore as ms

    for _ in range(2):
        try:
            (ms.Tensor(np.ones(1, np.float32)) + 1).asnumpy()
        except Exception:  # noqa: BLE001 - the earlier call's error, now out of the way
            continue


def _first_line(exc: BaseException) -> str:
    text = next((line for line in str(exc).split("\n") if line.strip() and not line.startswith("-")), "")
    return f"{type(exc).__name__}: {text[:200]}"


def run_entry(entry: Entry, items: list[Form]) -> list[Result]:
    """Convert all forms of one entry together, run each in torch and (PyNative) on MindSpore, compare. One class per
    distinct call: the receivers of the same call share it (converted once)."""
    from mindport.migrator import convert_source

    results: list[Result] = [None] * len(items)  # type: ignore[list-item]
    first: dict[tuple, Form] = {}
    for form in items:
        first.setdefault((form.args, form.prelude), form)
    calls = {key: c for c, key in enumerate(first)}  # (args, prelude) -> call index
    reps = list(first.values())
    t_mod = _load(program(entry, reps), "forms_torch")
    want = {}
    for i, form in enumerate(items):
        try:
            want[i] = _call_torch(t_mod, calls[(form.args, form.prelude)], _inputs(entry, form))
        except Exception as exc:  # noqa: BLE001 - torch rejects the form: not a case
            results[i] = Result(form, "rejected", _first_line(exc))
    live_calls = sorted({calls[(items[i].args, items[i].prelude)] for i in range(len(items)) if results[i] is None})
    if not live_calls:
        return results
    slot = {c: j for j, c in enumerate(live_calls)}  # call index -> class index in the converted program
    code = program(entry, [reps[c] for c in live_calls])
    converted = convert_source(code, "forms.py")
    starts = [n for n, line in enumerate(code.splitlines(), 1) if line.startswith("class Form")] + [10 ** 9]
    flagged: dict[int, list[str]] = {}
    for d in converted.diagnostics:
        for j in range(len(live_calls)):
            if starts[j] <= d.line < starts[j + 1]:
                flagged.setdefault(j, []).append(f"{d.code} {d.message[:160]}")
    ms_lines = _form_lines(converted.code, len(live_calls))
    try:
        m_mod = _load(converted.code, "forms_ms")
    except Exception as exc:  # noqa: BLE001
        for i in range(len(items)):
            if results[i] is None:
                results[i] = Result(items[i], "loud", f"converted module does not load: {_first_line(exc)}")
        return results
    for i, form in enumerate(items):
        if results[i] is not None:
            continue
        j = slot[calls[(form.args, form.prelude)]]
        if j in flagged:
            results[i] = Result(form, "flagged", "; ".join(flagged[j]), ms_lines.get(j, ""))
            continue
        try:
            got = _call_ms(m_mod, j, _inputs(entry, form))
        except Exception:  # noqa: BLE001
            # PyNative reports a kernel's error asynchronously: it can surface on the next call instead (a call
            # after a failing one raises the earlier error). Flushed, the form runs once more and its own error counts.
            _flush()
            try:
                got = _call_ms(m_mod, j, _inputs(entry, form))
            except Exception as exc:  # noqa: BLE001
                _flush()
                results[i] = Result(form, "loud", _first_line(exc), ms_lines.get(j, ""))
                continue
        try:
            problem = compare(form, want[i], got)
        except Exception as exc:  # noqa: BLE001
            problem = f"outputs not comparable: {_first_line(exc)}"
        results[i] = Result(form, "silent" if problem else "pass", problem, ms_lines.get(j, ""))
    return results


def _form_lines(code: str, count: int) -> dict[int, str]:
    """The converted body of each Form<i> class (for reports)."""
    out: dict[int, str] = {}
    current, body = None, []
    for line in code.splitlines() + ["class Form-1:"]:
        match = re.match(r"class Form(-?\d+)\b", line)
        if match:
            if current is not None:
                out[current] = " | ".join(b.strip() for b in body if b.strip() and not b.strip().startswith("def "))
            current, body = int(match.group(1)), []
        elif current is not None:
            body.append(line)
    return out


def run(registry: Registry, items: list[Form], progress=None) -> list[Result]:
    by_entry: dict[tuple, list[Form]] = {}
    for form in items:
        by_entry.setdefault((form.entry, form.label == "written"), []).append(form)
    results = []
    for (name, _), group in by_entry.items():
        if progress is not None:
            progress(name, len(group))
        results += run_entry(registry.lookup(name), group)
    return results


def run_graph(registry: Registry, items: list[Form]) -> list[Result]:
    """The same forms run once more with MindSpore in GRAPH_MODE (each converted module compiled as a graph)."""
    import mindspore as ms

    mode = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        return run(registry, items)
    finally:
        ms.set_context(mode=mode)


def graph_sample(items: list[Form], count: int) -> list[Form]:
    """A spread of forms for GRAPH_MODE: the first of every (family, spelling) on the example's receiver, thinned
    evenly to about ``count``."""
    picked, seen = [], set()
    for form in items:
        key = (form.family, form.label.split(":")[0])
        if form.receiver == "example" and key not in seen:
            seen.add(key)
            picked.append(form)
    return picked[::max(1, len(picked) // count)] if count else []


def table(results: list[Result]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for r in results:
        if r.kind == "rejected":
            continue
        row = counts.setdefault(r.form.family, dict.fromkeys(KINDS, 0))
        row[r.kind] += 1
    return counts


def main(argv=None) -> int:
    import argparse
    import json

    from mindport.mappings import load_registry

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="entries (torch.Tensor.<name>) to run")
    parser.add_argument("--graph", type=int, default=0, help="also run this many passing forms in GRAPH_MODE")
    parser.add_argument("--graph-only", action="store_true", help="run only the GRAPH_MODE sample")
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--set", choices=("all", "generated", "written"), default="all",
                        help="the forms derived from the entries, the written ones (WRITTEN), or both")
    args = parser.parse_args(argv)
    registry = load_registry()
    items = forms(registry, set(args.only) if args.only else None)
    if args.set != "all":
        items = [f for f in items if (f.label == "written") == (args.set == "written")]
    def progress(name, count):
        print(f"[forms] {name} ({count})", file=sys.stderr, flush=True)

    results = run(registry, items, progress) if not args.graph_only else []
    rows = table(results)
    total = dict.fromkeys(KINDS, 0)
    print(f"{'family':12s} " + " ".join(f"{k:>8s}" for k in KINDS))
    for fam in sorted(rows):
        print(f"{fam:12s} " + " ".join(f"{rows[fam][k]:8d}" for k in KINDS))
        for k in KINDS:
            total[k] += rows[fam][k]
    print(f"{'total':12s} " + " ".join(f"{total[k]:8d}" for k in KINDS))
    rejected = sum(r.kind == "rejected" for r in results)
    print(f"({len(results)} forms generated, {rejected} rejected by torch: not cases)")
    for r in results:
        if r.kind in ("silent", "loud"):
            print(f"{r.kind.upper():7s} {r.form.family:11s} {r.form.key}  -- {r.detail}  || {r.ms_line[:200]}")
    graph = []
    if args.graph:
        graph = run_graph(registry, graph_sample(items, args.graph))
        counts = {k: sum(r.kind == k for r in graph) for k in KINDS}
        print(f"GRAPH_MODE sample: {len(graph)} forms: {counts}")
        for r in graph:
            if r.kind in ("silent", "loud"):
                print(f"GRAPH-{r.kind.upper():7s} {r.form.key}  -- {r.detail}  || {r.ms_line[:200]}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([{"entry": r.form.entry, "family": r.form.family, "label": r.form.label, "call": r.form.key,
                        "receiver": r.form.receiver, "kind": r.kind, "detail": r.detail, "ms": r.ms_line}
                       for r in results] + [{"graph": True, "call": r.form.key, "kind": r.kind, "detail": r.detail}
                                            for r in graph], fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
