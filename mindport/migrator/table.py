"""The table engine: how one torch call's arguments become the MindSpore call's, through its mapping entry
(``rules/table_calls.py`` applies it to every call; the training rules use it for optimizers and clipping).

Per call: bind the torch arguments to the torch signature (positional -> keyword), report unsupported arguments,
drop the ignorable ones, apply value transforms, rename, apply the entry's call transforms, keep the arguments the
user wrote plus the ones whose defaults differ (``emit``), and build the MindSpore call. Nothing here knows about a
particular API: that is the data's job (``mindport/mappings/data``) and the named transforms'.
"""
from __future__ import annotations

import re

import libcst as cst

from mindport.mappings import Entry
from mindport.mappings.arguments import (  # noqa: F401  (the rules import them from here)
    VARARGS,
    CallBindError,
    RunTimeArguments,
    bind,
    map_arguments,
    ordered_arguments,
    receiver_name,
    sized_parameters,
    switched_target,
)
from mindport.mappings.transforms import Arg, value_code
from mindport.migrator.syntax import NO_SPACE_EQUAL, code_of
from mindport.migrator.walk import parse_expression

# Method names that numpy arrays, lists, dicts or strings also have: rewritten only on evident tensors. Every method
# torch.Tensor shares with numpy's array or a built-in value is here (tests/converter/test_unknown_receivers.py reads
# them from torch); the rest are torch's names Modules or Python's values also have (float, apply, to, get).
SHARED_METHOD_NAMES = frozenset({
    "sum", "mean", "max", "min", "std", "var", "prod", "all", "any", "argmax", "argmin", "transpose", "reshape",
    "flatten", "repeat", "clip", "astype", "copy", "fill", "item", "tolist", "round", "sort", "argsort", "cumsum",
    "cumprod", "squeeze", "view", "add", "index", "count", "pop", "append", "insert", "remove", "update", "get",
    "keys", "values", "items", "split", "join", "replace", "format", "strip", "type", "size", "dot", "nonzero",
    "trace", "diagonal", "conj", "real", "imag", "abs", "take", "put", "expand", "resize", "norm", "to", "float",
    "int", "long", "half", "double", "bool", "numpy", "new", "apply", "t", "T", "max", "chunk", "ravel", "swapaxes",
})


# Of those, the names whose runtime helper answers every receiver, a NumPy array, pandas object or another library's
# object by its own method, and whose name left as written on a tensor would be wrong: rewritten on a receiver of
# unknown kind too. ``std``/``var``: MindSpore's Tensor method divides by n, torch by n - 1 (measured 0.7042 vs 0.7355;
# ``fake = netG(noise); fake.std()`` a silent difference); ``new``: MindSpore's Tensor has no legacy constructor
# (``w = getattr(self.module, name); w.data.new(height).normal_(0, 1)``, heykeetae/Self-Attention-GAN's SpectralNorm:
# an AttributeError at run time, the line left unflagged)
RECEIVER_DISPATCHED_NAMES = frozenset({"std", "var", "new"})


# Of those, the names only numpy arrays share (not lists, dicts, strings, sets, Modules): in a file that imports no
# package of arrays (ARRAY_PACKAGES), a receiver of unknown kind calling one is taken for a tensor
# (``masks[-1].repeat(2, 1)`` on a list of masks a function built). tests/converter/test_unknown_receivers.py derives
# the set from numpy and the builtin types.
ARRAY_METHOD_NAMES = frozenset({
    "T", "all", "any", "argmax", "argmin", "argsort", "astype", "clip", "conj", "cumprod", "cumsum", "diagonal", "dot",
    "fill", "flatten", "item", "max", "mean", "min", "nonzero", "prod", "put", "repeat", "reshape", "resize", "round",
    "size", "squeeze", "std", "sum", "take", "tolist", "trace", "transpose", "var", "view", "ravel", "swapaxes",
})
ARRAY_PACKAGES = ("numpy", "pandas", "scipy", "cv2", "sklearn", "h5py", "PIL", "numba", "jax")


# Keywords only torch.Tensor's methods take: numpy spells them ``axis``/``keepdims``, and lists, dicts, strings, sets
# and numbers take none of them (tests/converter/test_unknown_receivers.py calls every shared name with each). A
# shared-name method called with one (``(data.targets == 5).nonzero(as_tuple=True)``, ``h.max(dim=1)``,
# ``x.split(4, dim=-1)``) is torch's on a receiver of unknown kind, in any file: the call itself says so. Not in a
# file that imports a package whose arrays also take ``dim`` (TORCH_KEYWORD_PACKAGES: xarray's ``a.sum(dim="x")``).
TORCH_ONLY_METHOD_KEYWORDS = frozenset({"dim", "keepdim", "as_tuple"})
ANY_KEYWORD_METHOD_NAMES = frozenset({"update", "format"})  # dict.update(dim=64), "{dim}".format(dim=3): no evidence
TORCH_KEYWORD_PACKAGES = ("xarray",)


_MS_NAME = re.compile(r"(?<![\w.])(?:mindspore|mindport\.runtime)(?:\.\w+)+")


def bind_arguments(entry: Entry, args: list) -> dict[str, Arg]:
    """torch call arguments (libcst ``Arg`` nodes) -> {torch parameter: Arg}, defaults filled in (``given=False``):
    :func:`mindport.mappings.arguments.bind` on the call site's source."""
    return bind(entry, ((arg.star, arg.keyword.value if arg.keyword is not None else None,
                         Arg(value_code(arg), True, arg.value, arg), arg) for arg in args))


ADAPT_MODULE = "mindport.runtime.adapt"


def adapter_expr(ctx, qual: str) -> cst.BaseExpression:
    """``mp_adapt.api("torch.nn.LayerNorm")``: the runtime adapter of a torch API (``mindport/runtime/adapt.py``), for a
    call whose arguments are only known at run time or an API passed as a value; it maps the arguments through the
    same entry when the call happens."""
    profile = "" if ctx.options.target == "nn" else f', "{ctx.options.target}"'
    return parse_expression(f'{ctx.alias_for(ADAPT_MODULE)}.api("{qual}"{profile})')


def needs_mapping(entry: Entry) -> bool:
    """Does a call of the entry need its arguments rewritten (not only its name)?"""
    return bool(entry.rename or entry.emit or entry.transforms or entry.values or entry.drop or entry.unsupported)


def value_expr(ctx, qual: str) -> cst.BaseExpression | None:
    """A torch API used as a value (``norm_layer=nn.LayerNorm``, ``partial(torch.cat, dim=1)``, a re-exported
    ``from torch.optim import AdamW``): the MindSpore name when its calls need no argument mapping, otherwise the
    runtime adapter of its entry, which maps the arguments whenever it is called. None when it has no mapping."""
    entry = ctx.registry.lookup(qual)
    target = entry.resolve(ctx.options.target)[0] if entry is not None else None
    if entry is None or target is None or not entry.supported:
        return None
    if entry.kind != "attribute" and (target.startswith(".") or needs_mapping(entry)):
        return adapter_expr(ctx, qual)
    if entry.kind == "layer" and ctx.options.target == "nn" and sized_parameters(entry):
        # a size or count known only when it is called (``dict(pool=nn.AdaptiveAvgPool2d)`` then ``pool([2, 3])``,
        # a numpy integer): mapped as written (IMPLICIT_VALUES), so not MindSpore's class itself; TableCallTransform
        # makes the adapter a value class of the file that reads them (factories.sizes_statement)
        return adapter_expr(ctx, qual)
    return ctx.target_expr(target)


def build_call_args(entry: Entry, mapped: dict[str, Arg], profile: str = "nn") -> list[cst.Arg]:
    """MindSpore call arguments: the `positional` names first (in order), then keywords.

    An argument the user wrote keeps its own node (comments, line breaks and trailing comma survive); arguments
    the mapping adds are appended. The mint profile keeps torch's names, so `positional` is read back through
    the renames there.
    """
    out: list[cst.Arg] = []
    for keyword, arg in ordered_arguments(entry, mapped, profile):
        if arg.source == VARARGS:
            out.extend(arg.node)
        else:
            out.append(_with_value(arg, keyword=keyword))
    return fix_commas(out)


def _with_value(arg: Arg, keyword: str | None) -> cst.Arg:
    base = arg.cst_arg if arg.cst_arg is not None else cst.Arg(value=cst.Name("_"))
    changes: dict = {"value": arg_expression(arg)}
    if keyword is None:
        changes.update(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
    else:
        changes.update(keyword=cst.Name(keyword), equal=NO_SPACE_EQUAL if base.keyword is None else base.equal)
    return base.with_changes(**changes)


def fix_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Every argument but the last needs a comma; keep the user's comma (and its whitespace) where there is one."""
    fixed = []
    for i, arg in enumerate(args):
        last = i == len(args) - 1
        if not last and not isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif last and isinstance(arg.comma, cst.Comma) and not _has_newline(arg.comma):
            arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        fixed.append(arg)
    return fixed


def _has_newline(comma: cst.Comma) -> bool:
    return isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def arg_expression(arg: Arg) -> cst.BaseExpression:
    if arg.node is not None and not isinstance(arg.node, list) and code_of(arg.node) == arg.source:
        return arg.node
    try:
        return parse_expression(arg.source)
    except cst.ParserSyntaxError:
        if "\n" not in arg.source:
            raise
        return parse_expression(f"({arg.source})")  # written over several lines inside the call's parentheses


def resolve_ms_names(ctx, mapped: dict[str, Arg]) -> None:
    """A transform may write a full MindSpore or mindport.runtime name (``mindspore.int64``,
    ``mindport.runtime.optim.distinct_names``) in an argument it builds: replace it by the converted code's alias
    (``ms.int64``, ``mp_optim.distinct_names``) and schedule the import."""
    for name, arg in mapped.items():
        if arg.node is None and arg.source != VARARGS and _MS_NAME.search(arg.source):
            source = _MS_NAME.sub(lambda m: ctx.target_text(m.group(0)), arg.source)
            mapped[name] = Arg(source, arg.given, None, arg.cst_arg)


def parenthesize(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
