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
from mindport.mappings.transforms import (
    CALL_TRANSFORMS,
    TARGET,
    VALUE_TRANSFORMS,
    Arg,
    Unsupported,
    value_code,
)
from mindport.migrator.syntax import NO_SPACE_EQUAL, code_of
from mindport.migrator.walk import parse_expression

# Method names that numpy arrays, lists, dicts or strings also have: rewritten only on evident tensors.
SHARED_METHOD_NAMES = frozenset({
    "sum", "mean", "max", "min", "std", "var", "prod", "all", "any", "argmax", "argmin", "transpose", "reshape",
    "flatten", "repeat", "clip", "astype", "copy", "fill", "item", "tolist", "round", "sort", "argsort", "cumsum",
    "cumprod", "squeeze", "view", "add", "index", "count", "pop", "append", "insert", "remove", "update", "get",
    "keys", "values", "items", "split", "join", "replace", "format", "strip", "type", "size", "dot", "nonzero",
    "trace", "diagonal", "conj", "real", "imag", "abs", "take", "put", "expand", "resize", "norm", "to", "float",
    "int", "long", "half", "double", "bool", "numpy", "new", "apply", "t", "T", "max", "chunk",
})


_VARARGS = "<varargs>"


_MS_NAME = re.compile(r"(?<![\w.])mindspore(?:\.\w+)+")


class CallBindError(Exception):
    pass


def bind_arguments(entry: Entry, args: list) -> dict[str, Arg]:
    """torch call arguments (libcst ``Arg`` nodes) -> {torch parameter: Arg}, defaults filled in (``given=False``)."""
    params = list(entry.signature or ())
    bound: dict[str, Arg] = {}
    positional = [p for p in params if p.kind == "positional"]
    var_pos = next((p for p in params if p.kind == "var_positional"), None)
    var_kw = next((p for p in params if p.kind == "var_keyword"), None)
    extra_positional: list[cst.Arg] = []
    extra_keywords: list[cst.Arg] = []
    index = 0
    for arg in args:
        if arg.star == "**":
            raise CallBindError("**kwargs at the call site cannot be matched to the signature")
        if arg.star == "*":
            if var_pos is not None and index >= len(positional):
                extra_positional.append(arg)
                continue
            raise CallBindError("*args at the call site cannot be matched to the signature")
        if arg.keyword is None:
            if index < len(positional):
                bound[positional[index].name] = Arg(value_code(arg), True, arg.value, arg)
                index += 1
            elif var_pos is not None:
                extra_positional.append(arg)
            else:
                raise CallBindError(f"too many positional arguments ({len(positional)} expected)")
        else:
            name = arg.keyword.value
            if any(p.name == name and p.kind in ("positional", "keyword_only") for p in params):
                if name in bound:
                    raise CallBindError(f"argument {name!r} given twice")
                bound[name] = Arg(value_code(arg), True, arg.value, arg)
            elif var_kw is not None:
                extra_keywords.append(arg)
            else:
                raise CallBindError(f"unexpected keyword argument {name!r}")
    for p in params:
        if p.kind in ("positional", "keyword_only") and p.name not in bound:
            if p.default is None:
                raise CallBindError(f"missing required argument {p.name!r}")
            bound[p.name] = Arg(p.default, False)
    if var_pos is not None:
        bound[var_pos.name] = Arg(_VARARGS, bool(extra_positional), extra_positional)
    if var_kw is not None:
        bound[var_kw.name] = Arg(_VARARGS, bool(extra_keywords), extra_keywords)
    return bound


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
        if arg is not None and arg.given and param is not None:
            if arg.source != param.default:
                raise Unsupported(f"argument {name}={arg.source} is not supported: {reason}")
            if name not in entry.emit:
                bound[name] = Arg(arg.source, False, arg.node, arg.cst_arg)  # spelled at its default: not written
    for name in entry.drop:
        bound.pop(name, None)
    for name, transform in entry.values.items():
        arg = bound.get(name)
        if arg is not None:
            bound[name] = Arg(VALUE_TRANSFORMS[transform](arg), arg.given or name in entry.emit, None, arg.cst_arg)
    renamed: dict[str, Arg] = {}
    for name, arg in bound.items():
        if arg.given or name in entry.emit:
            arg = Arg(arg.source, True, arg.node, arg.cst_arg)
        renamed[entry.rename.get(name, name)] = arg
    for transform in entry.transforms:
        CALL_TRANSFORMS[transform](renamed)
    return {name: arg for name, arg in renamed.items() if arg.given} | switched


def _switch(entry: Entry, bound: dict[str, Arg]) -> dict[str, Arg]:
    """``switch = { inplace = { "True" = "mindport.runtime.layers.ReLU" } }``: that argument value calls another
    target ({TARGET: target}, popped by the caller); a value that is not a literal can't be decided: MP102."""
    for name, choices in entry.switch.items():
        arg = bound.get(name)
        if arg is None or not arg.given:
            continue
        if arg.source in choices:
            return {TARGET: Arg(choices[arg.source], True)}
        if not arg.is_literal():
            raise Unsupported(f"{name}={arg.source}: the MindSpore call depends on its value "
                              f"({', '.join(choices)}): write it as a literal")
    return {}


def switched_target(mapped: dict[str, Arg], target: str) -> str:
    """The entry's target, or the one its ``switch`` chose (removed from ``mapped``)."""
    arg = mapped.pop(TARGET, None)
    return arg.source if arg is not None else target


def build_call_args(entry: Entry, mapped: dict[str, Arg], profile: str = "nn") -> list[cst.Arg]:
    """MindSpore call arguments: the `positional` names first (in order), then keywords.

    An argument the user wrote keeps its own node (comments, line breaks and trailing comma survive); arguments
    the mapping adds are appended. The mint profile keeps torch's names, so `positional` is read back through
    the renames there.
    """
    out: list[cst.Arg] = []
    for keyword, arg in ordered_arguments(entry, mapped, profile):
        if arg.source == _VARARGS:
            out.extend(arg.node)
        else:
            out.append(_with_value(arg, keyword=keyword))
    return fix_commas(out)


def ordered_arguments(entry: Entry, mapped: dict[str, Arg], profile: str = "nn") -> list[tuple[str | None, Arg]]:
    """(keyword or None for positional, argument) in MindSpore call order; ``mapped`` is emptied."""
    out: list[tuple[str | None, Arg]] = []
    positional = entry.positional
    if profile == "mint" and not entry.mint_mapped:
        back = {ms: torch for torch, ms in entry.rename.items()}
        positional = tuple(back.get(name, name) for name in positional)
    for name in positional:
        arg = mapped.pop(name, None)
        if arg is not None:
            out.append((None, arg))
    out.extend(mapped.items())
    mapped.clear()
    return out


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
    return parse_expression(arg.source)


def resolve_ms_names(ctx, mapped: dict[str, Arg]) -> None:
    """A transform may write a full MindSpore name (``mindspore.int64``) in an argument it builds: replace it by
    the converted code's alias (``ms.int64``) and schedule the import."""
    for name, arg in mapped.items():
        if arg.node is None and arg.source != _VARARGS and "mindspore." in arg.source:
            source = _MS_NAME.sub(lambda m: ctx.target_text(m.group(0)), arg.source)
            mapped[name] = Arg(source, arg.given, None, arg.cst_arg)


def parenthesize(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
