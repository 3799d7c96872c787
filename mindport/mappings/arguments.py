"""How one call's arguments follow a mapping entry: bind them to torch's signature, then apply the entry's
unsupported checks, drops, value transforms, renames, call transforms and ``emit``, then order them for the
MindSpore call. One implementation, used from both sides of a conversion:

* the converter (``mindport/migrator/table.py``) binds the arguments written at a call site (their source text and
  LibCST nodes) and writes the MindSpore call;
* the runtime adapter (``mindport/runtime/adapt.py``) binds the values a call receives when it happens (``**kwargs``,
  ``functools.partial``, a torch class passed as a value), runs the same steps on their source (a literal's ``repr``,
  or a name bound to the value) and evaluates the result.

Arguments travel as :class:`mindport.mappings.transforms.Arg`. Nothing here knows about a particular API.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from mindport.mappings import Entry
from mindport.mappings.transforms import CALL_TRANSFORMS, TARGET, UNKNOWN, VALUE_TRANSFORMS, Arg, Unsupported
from mindport.mappings.transforms.layers import IMPLICIT_VALUES

# torch's argument parser also takes numpy's names for these parameters (python_arg_parser.cpp:
# x.sum(axis=1, keepdims=True) is x.sum(dim=1, keepdim=True)); used when the signature lacks the name given.
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}

VARARGS = "<varargs>"  # the source of a *args/**kwargs slot; its Arg.node lists the arguments it took

# The ``*name`` parameters torch's C++ argument parser also takes as one keyword argument: an int list (an IntArrayRef
# first parameter) is taken spread out, as one sequence, or by its schema name, ``torch.zeros(size=(2, 3))``,
# ``x.view(size=...)``, ``x.reshape(shape=...)``, ``x.permute(dims=...)``. Python-level functions with ``*tensors``,
# ``*operands``, ``*shapes`` refuse the keyword. tests/mappings/test_varargs_keyword.py asks the installed torch, for
# every entry with a ``*name`` parameter, whether it takes the keyword and checks that binding agrees.
KEYWORD_VARARGS = frozenset({"size", "shape", "dims"})


class CallBindError(Exception):
    """The arguments do not fit the torch signature."""


class RunTimeArguments(CallBindError):
    """The arguments cannot be matched before run time: ``*args``/``**kwargs`` at the call site (the converter hands
    such a call to the runtime adapter, which binds the values when the call happens)."""


@dataclass(frozen=True)
class Extra:
    """A run-time argument that went into a ``*args``/``**kwargs`` slot of the signature (the converter keeps the
    LibCST ``Arg`` there instead; both have ``star``, ``keyword`` and a source through ``value_code``)."""

    source: str
    keyword: str | None = None
    star: str = ""


# torch's deprecated argument orders that put a scalar before the tensors: ``torch.addcmul(x, -1, a, b)``,
# ``torch.add(x, 2, y)``, ``torch.addmm(beta, x, alpha, m1, m2)`` (and without alpha), ``x.addcmul_(value, a, b)``.
# torch 2.13 still accepts every one (with a deprecation warning); the functions' orders, a method's is the same less
# ``input`` (it is the receiver). tests/mappings/test_scalar_first_orders.py calls each in torch and converted.
SCALAR_FIRST = {
    "add": (("input", "alpha", "other"),), "sub": (("input", "alpha", "other"),),
    "addcmul": (("input", "value", "tensor1", "tensor2"),), "addcdiv": (("input", "value", "tensor1", "tensor2"),),
    **{name: (("beta", "input", "alpha", *ts), ("beta", "input", *ts)) for name, ts in (
        ("addmm", ("mat1", "mat2")), ("addmv", ("mat", "vec")), ("addr", ("vec1", "vec2")),
        ("addbmm", ("batch1", "batch2")), ("baddbmm", ("batch1", "batch2")))},
}


def _scalar_first(entry: Entry, items: list, expected: int) -> list:
    """More positional arguments than the signature takes, in one of torch's scalar-first orders (SCALAR_FIRST):
    the same arguments given by name, so they bind as torch binds them."""
    head, _, name = entry.torch.rpartition(".")
    method = head == "torch.Tensor"
    orders = SCALAR_FIRST.get(name.removesuffix("_") if method else name, ()) if head in ("torch", "torch.Tensor") \
        else ()
    written = [item for item in items if not item[0] and item[1] is None]
    if not orders or len(written) <= expected or any(item[0] for item in items):
        return items
    for order in orders:
        order = tuple(n for n in order if n != "input") if method else order
        if len(order) == len(written):
            named = [("", n, arg, raw) for n, (_, _, arg, raw) in zip(order, written)]
            return named + [item for item in items if item[1] is not None]
    return items


def bind(entry: Entry, items: Iterable[tuple[str, str | None, Arg, Any]]) -> dict[str, Arg]:
    """Call arguments -> {torch parameter: Arg}, torch's defaults filled in (``given=False``).

    ``items``: one ``(star, keyword, arg, raw)`` per argument as written: ``star`` is ``""``, ``"*"`` or ``"**"``,
    ``raw`` is what a ``*args``/``**kwargs`` slot of the signature keeps (its ``Arg.node`` lists them).
    """
    params = list(entry.signature or ())
    bound: dict[str, Arg] = {}
    positional = [p for p in params if p.kind == "positional"]
    items = _scalar_first(entry, list(items), len(positional))
    var_pos = next((p for p in params if p.kind == "var_positional"), None)
    var_kw = next((p for p in params if p.kind == "var_keyword"), None)
    extra_positional: list = []
    extra_keywords: list = []
    index = 0
    for star, keyword, arg, raw in items:
        if star == "**":
            raise RunTimeArguments("**kwargs at the call site cannot be matched to the signature")
        if star == "*":
            if var_pos is not None and index >= len(positional):
                extra_positional.append(raw)
                continue
            raise RunTimeArguments("*args at the call site cannot be matched to the signature")
        if keyword is None:
            if index < len(positional):
                bound[positional[index].name] = arg
                index += 1
            elif var_pos is not None:
                extra_positional.append(raw)
            else:
                raise CallBindError(f"too many positional arguments ({len(positional)} expected)")
        elif any(p.name == keyword and p.kind in ("positional", "keyword_only") for p in params) or (
                keyword in NUMPY_NAMES and var_kw is None
                and any(p.name == NUMPY_NAMES[keyword] and p.kind in ("positional", "keyword_only") for p in params)):
            if not any(p.name == keyword for p in params):
                keyword = NUMPY_NAMES[keyword]
            if keyword in bound:
                raise CallBindError(f"argument {keyword!r} given twice")
            bound[keyword] = arg
        elif var_kw is not None:
            extra_keywords.append(raw)
        elif var_pos is not None and keyword == var_pos.name and keyword in KEYWORD_VARARGS:
            if extra_positional:
                raise CallBindError(f"argument {keyword!r} given twice")
            extra_positional.append(_without_keyword(raw))
        else:
            raise CallBindError(f"unexpected keyword argument {keyword!r}")
    for p in params:
        if p.kind in ("positional", "keyword_only") and p.name not in bound:
            if p.default is None:
                raise CallBindError(f"missing required argument {p.name!r}")
            bound[p.name] = Arg(p.default, False)
    if var_pos is not None:
        bound[var_pos.name] = Arg(VARARGS, bool(extra_positional), extra_positional)
    if var_kw is not None:
        bound[var_kw.name] = Arg(VARARGS, bool(extra_keywords), extra_keywords)
    return bound


def _without_keyword(raw: Any) -> Any:
    """A keyword argument as the one positional argument of a ``*name`` slot (``size=(2, 3)`` -> ``(2, 3)``): the
    runtime adapter's :class:`Extra`, or the converter's LibCST ``Arg`` (libcst is loaded only then)."""
    if isinstance(raw, Extra):
        return Extra(raw.source)
    import libcst as cst

    return raw.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)


def _differs_from_default(arg: Arg, default: str | None) -> bool:
    """``arg`` given with a value other than the default: compared as literals when both are (``"zeros"`` is
    ``'zeros'``), as source text otherwise."""
    if default is None:
        return True
    if arg.source == default:
        return False
    value, default_value = arg.literal(default=UNKNOWN), Arg(default).literal(default=UNKNOWN)
    if value is UNKNOWN or default_value is UNKNOWN:
        return True
    return value != default_value or isinstance(value, bool) != isinstance(default_value, bool)


def map_arguments(entry: Entry, bound: dict[str, Arg], profile: str = "nn") -> dict[str, Arg]:
    """Apply unsupported checks, drops, value transforms, renames, call transforms and `emit`, in that order.

    The mint profile is torch-aligned: it keeps torch's argument names and values unless the entry says
    ``mint_mapped = true``.
    """
    if profile == "mint" and not entry.mint_mapped:
        for name in entry.drop:
            bound.pop(name, None)
        return {name: arg for name, arg in bound.items() if arg.given}
    switched = _switch(entry, bound)
    for name, reason in entry.unsupported.items():
        arg = bound.get(name)
        param = entry.param(name)
        if switched and arg is not None and arg.source in entry.switch.get(name, {}):
            continue  # the value the switched-to target exists for
        if arg is not None and arg.given and param is not None:
            if _differs_from_default(arg, param.default):
                raise Unsupported(f"argument {name}={arg.source} is not supported: {reason}")
            if name not in entry.emit:
                bound[name] = Arg(arg.source, False, arg.node, arg.cst_arg)  # spelled at its default: not written
    for name in entry.drop:
        bound.pop(name, None)
    for name in IMPLICIT_VALUES.keys() & bound.keys() - entry.values.keys():
        arg = bound[name]
        source = implicit_source(name, arg)
        if source != arg.source:
            bound[name] = Arg(source, arg.given, None, arg.cst_arg)
    for name, transform in entry.values.items():
        arg = bound.get(name)
        if arg is not None and not (switched and name in entry.switch):  # the switched-to target takes the value
            source = VALUE_TRANSFORMS[transform](arg)
            node = arg.node if source == arg.source else None  # unchanged: the user's node (layout, comments) stays
            bound[name] = Arg(source, arg.given or name in entry.emit, node, arg.cst_arg)
    renamed: dict[str, Arg] = {}
    for name, arg in bound.items():
        if arg.given or name in entry.emit:
            arg = Arg(arg.source, True, arg.node, arg.cst_arg)
        renamed[entry.rename.get(name, name)] = arg
    for transform in entry.transforms:
        CALL_TRANSFORMS[transform](renamed)
    return {name: arg for name, arg in renamed.items() if arg.given} | switched


def sized_parameters(entry: Entry) -> list[str]:
    """The parameters of an entry with a size argument (``kernel_size``, ``stride``, ``padding``, ``dilation``,
    ``output_padding``, ``output_size``) that :func:`implicit_source` reads (IMPLICIT_VALUES: those sizes, and the
    counts beside them, ``in_channels`` ...): torch takes any sequence, a one-element size, a numpy integer there,
    MindSpore only a plain int or a full tuple. Empty for an entry with no size argument (nn.Linear, nn.BatchNorm2d:
    a count known only at run time is taken as given there)."""
    names = [p.name for p in entry.signature or () if p.name in IMPLICIT_VALUES and p.kind != "var_positional"]
    if not any(IMPLICIT_VALUES[n] == "layers_size_tuple" for n in names):
        return []
    return names


def implicit_source(name: str, arg: Arg) -> str:
    """The source of torch's argument ``name`` as MindSpore takes it, by the name alone (IMPLICIT_VALUES: a size
    list as a tuple, a one-element size as its element, a numpy number as an int); ``arg.source`` when the name has
    no such reading. map_arguments applies it to every entry's arguments of these names, and the runtime (the
    adapter, :func:`mindport.runtime.adapt.layer_sizes` in the converter's value classes) to values known only when
    the code runs."""
    transform = IMPLICIT_VALUES.get(name)
    return arg.source if transform is None else VALUE_TRANSFORMS[transform](arg)


def _switch(entry: Entry, bound: dict[str, Arg]) -> dict[str, Arg]:
    """``switch = { inplace = { "True" = "mindport.runtime.layers.InplaceReLU" } }``: that argument value calls
    another target ({TARGET: target}, taken by :func:`switched_target`); a value that is not a literal can't be
    decided before run time: Unsupported (the converter flags it MP102). ``"*"`` names the target of every other value
    given (``switch = { dtype = { "*" = "mindport.runtime.math.randn" } }``: ``torch.randn(2, 3)`` is MindSpore's own
    op, a ``dtype`` given, which may be complex, goes to the runtime function); ``"?"`` names a target that takes
    every value, for a value not known before run time (``F.one_hot(x, num_classes=self.n)``: the runtime one_hot,
    which infers the depth for -1 and passes any other on; without it the generic adapter binds the call)."""
    for name, choices in entry.switch.items():
        arg = bound.get(name)
        if arg is None or not arg.given:
            param = entry.param(name)  # a default MindSpore must be told (``emit``) that calls the other target:
            if name in entry.emit and param is not None and param.default in choices:  # F.one_hot(t), depth -1
                return {TARGET: Arg(choices[param.default], True)}
            continue
        if arg.source in choices:
            return {TARGET: Arg(choices[arg.source], True)}
        param = entry.param(name)
        if "*" in choices and _differs_from_default(arg, param.default if param is not None else None):
            return {TARGET: Arg(choices["*"], True)}
        if not arg.is_literal() and "?" in choices:  # a target taking every value, deciding when the call happens
            return {TARGET: Arg(choices["?"], True)}  # (F.one_hot(x, num_classes=self.n): the depth's helper)
        if not arg.is_literal():  # decided when the call happens: the runtime adapter binds the value
            raise RunTimeArguments(f"{name}={arg.source}: the MindSpore call depends on its value "
                                   f"({', '.join(choices)})")
    return {}


def switched_target(mapped: dict[str, Arg], target: str) -> str:
    """The entry's target, or the one its ``switch`` chose (removed from ``mapped``)."""
    arg = mapped.pop(TARGET, None)
    return arg.source if arg is not None else target


def ordered_arguments(entry: Entry, mapped: dict[str, Arg], profile: str = "nn") -> list[tuple[str | None, Arg]]:
    """(keyword or None for positional, argument) in MindSpore call order; ``mapped`` is emptied."""
    out: list[tuple[str | None, Arg]] = []
    positional = entry.positional
    if profile == "mint" and not entry.mint_mapped:
        back = {ms: torch for torch, ms in entry.rename.items()}
        positional = tuple(back.get(name, name) for name in positional)
    for name in positional:
        arg = mapped.pop(name, None)
        if arg is None:
            break  # a later one written positionally would take this one's place: keywords from here on
        out.append((None, arg))
    out.extend(mapped.items())
    mapped.clear()
    return out


def receiver_name(entry: Entry, mapped: dict[str, Arg]) -> str:
    """The MindSpore argument a ``.method`` target of a function entry is called on (``torch.transpose(x, 0, 1)`` ->
    ``x.swapaxes(0, 1)``): the first ``positional`` name, or the first argument."""
    return entry.positional[0] if entry.positional else next(iter(mapped))
