"""The table engine: every torch API call (and dtype/attribute reference) rewritten through its mapping entry.

Per call: bind the torch arguments to the torch signature (positional -> keyword), report unsupported arguments,
drop the ignorable ones, apply value transforms, rename, apply the entry's call transforms, keep the arguments the
user wrote plus the ones whose defaults differ (``emit``), and build the MindSpore call. Nothing here knows about a
particular API: that is the data's job (``mindport/mappings/data``) and the named transforms'.
"""
from __future__ import annotations

import re

import libcst as cst

from mindport.mappings import Entry
from mindport.mappings.transforms import CALL_TRANSFORMS, TARGET, VALUE_TRANSFORMS, Arg, Unsupported, value_code
from mindport.migrator.base import Rule
from mindport.migrator.names import receiver_kind
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


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def bind_arguments(entry: Entry, args: list) -> dict[str, Arg]:
    """torch call arguments -> {torch parameter: Arg}, defaults filled in (``given=False``).

    ``args`` are libcst ``Arg`` nodes, or the fast path's ``SourceArg`` records (same attributes: ``star``,
    ``keyword.value``, ``value``)."""
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
    return _fix_commas(out)


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
    changes: dict = {"value": _expr(arg)}
    if keyword is None:
        changes.update(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
    else:
        changes.update(keyword=cst.Name(keyword), equal=_EQ if base.keyword is None else base.equal)
    return base.with_changes(**changes)


_EQ = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _fix_commas(args: list[cst.Arg]) -> list[cst.Arg]:
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


def _expr(arg: Arg) -> cst.BaseExpression:
    if arg.node is not None and not isinstance(arg.node, list) and _code(arg.node) == arg.source:
        return arg.node
    return parse_expression(arg.source)


class TableCallTransform(Rule):
    """Rewrites calls and attribute references whose torch name has a mapping entry; flags the others."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._call_funcs: set[int] = set()
        self._inner: set[int] = set()  # `torch.nn` inside `torch.nn.functional.relu`: only the whole chain counts

    def visit_Call(self, node: cst.Call) -> None:
        self._call_funcs.add(id(node.func))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._inner.add(id(node.value))
        self._inner.add(id(node.attr))  # `nn` in `torch.nn` is an attribute name, not a reference to `nn`

    # Names that are not references: keyword names, parameter and definition names.
    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._inner.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self._inner.add(id(node.name))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._inner.add(id(node.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._inner.add(id(node.name))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) in self.ctx.handled:
            return updated_node
        qual = self.scope.resolve_torch(original_node.func)
        if qual is None:
            return self._method_call(original_node, updated_node)
        entry = self.ctx.registry.lookup(qual)
        if entry is None:
            self.flag(original_node, "MP103", f"{qual} has no mapping entry: left unconverted",
                      "convert by hand, or add an entry to mindport/mappings/data", qual)
            return updated_node
        target, profile = entry.resolve(self.ctx.options.target)
        if not entry.supported or target is None:
            reason = entry.reason or f"no {self.ctx.options.target!r} target"
            self.flag(original_node, "MP101", f"{qual} is not supported: {reason}", "rewrite by hand", qual)
            return updated_node
        if entry.kind == "attribute":
            self.ctx.converted_sites += 1
            return updated_node.with_changes(func=self._func_expr(original_node.func, target))
        try:
            bound = bind_arguments(entry, list(updated_node.args))
            mapped = map_arguments(entry, bound, profile)
            target = switched_target(mapped, target)
            self._resolve_ms_names(mapped)
        except CallBindError as exc:
            self.flag(original_node, "MP102", f"{qual}: {exc}", "pass arguments explicitly", qual)
            return updated_node
        except Unsupported as exc:
            self.flag(original_node, "MP102", f"{qual}: {exc}", "", qual)
            return updated_node
        self.ctx.converted_sites += 1
        if target.startswith("."):
            # A method on the first MindSpore argument (e.g. torch.transpose(x, 0, 1) -> x.swapaxes(0, 1)).
            receiver_name = entry.positional[0] if entry.positional else next(iter(mapped))
            receiver = _expr(mapped.pop(receiver_name))
            func = cst.Attribute(value=_parenthesize(receiver), attr=cst.Name(target[1:]))
            return updated_node.with_changes(func=func, args=build_call_args(entry, mapped, profile))
        return updated_node.with_changes(func=self._func_expr(original_node.func, target),
                                         args=build_call_args(entry, mapped, profile))

    def _method_call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        """``x.view(...)`` and friends, through the ``torch.Tensor.*`` entries, when ``x`` is plausibly a tensor."""
        func = original_node.func
        if not isinstance(func, cst.Attribute) or self.scope.resolve(func) is not None:
            return updated_node
        entry = self.ctx.registry.lookup(f"torch.Tensor.{func.attr.value}")
        if entry is None or entry.kind != "method":
            return updated_node
        target, profile = entry.resolve(self.ctx.options.target)
        if target is None or not entry.supported:
            if self._plausible(func, strict=True):
                self.flag(original_node, "MP101", f"{entry.torch} is not supported: {entry.reason}", "", entry.torch)
            return updated_node
        if target == f".{func.attr.value}" and not (entry.rename or entry.emit or entry.transforms or entry.values
                                                     or entry.drop or entry.unsupported):
            return updated_node  # same method, same arguments
        if not self._plausible(func, strict=func.attr.value in SHARED_METHOD_NAMES):
            return updated_node
        if func.attr.value.endswith("_") and isinstance(func.value, cst.Subscript) and not _keyed(func.value):
            self.flag(original_node, "MP102", f"{entry.torch} on an indexed view: indexing a MindSpore tensor makes a "
                      "copy, so the update would be lost", "assign the result: x[i] = <out-of-place op>(x[i], ...)",
                      entry.torch)
            return updated_node
        try:
            mapped = map_arguments(entry, bind_arguments(entry, list(updated_node.args)), profile)
            target = switched_target(mapped, target)
            self._resolve_ms_names(mapped)
        except CallBindError as exc:
            self.flag(original_node, "MP102", f"{entry.torch}: {exc}", "pass arguments explicitly", entry.torch)
            return updated_node
        except Unsupported as exc:
            self.flag(original_node, "MP102", f"{entry.torch}: {exc}", "", entry.torch)
            return updated_node
        self.ctx.converted_sites += 1
        receiver = updated_node.func.value  # type: ignore[union-attr]
        if func.attr.value.endswith("_") and isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            receiver = receiver.value  # p.data.zero_(): MindSpore's Parameter.data is a copy, update p itself
        args = build_call_args(entry, mapped, profile)
        if target.startswith("."):
            method = updated_node.func.with_changes(value=receiver, attr=cst.Name(target[1:]))
            return updated_node.with_changes(func=method, args=args)
        return updated_node.with_changes(func=self.ctx.target_expr(target),
                                         args=_fix_commas([cst.Arg(value=receiver), *args]))

    def _resolve_ms_names(self, mapped: dict[str, Arg]) -> None:
        resolve_ms_names(self.ctx, mapped)

    def _plausible(self, func: cst.Attribute, strict: bool) -> bool:
        """Is the receiver plausibly a tensor? ``strict`` for names numpy/lists/dicts share (sum, reshape ...)."""
        kind = receiver_kind(func.value, self.scope)
        if kind in ("python", "foreign", "object"):
            return False  # "object": self.softmax(x) calls a sub-layer, not Tensor.softmax
        return kind == "tensor" or not strict

    def _func_expr(self, func: cst.BaseExpression, target: str) -> cst.BaseExpression:
        if self.scope.is_local_alias(func):
            return func  # `act = F.relu; act(x)`: the alias assignment itself is rewritten
        return self.ctx.target_expr(target)

    def _reference(self, original_node, updated_node):
        if id(original_node) in self._call_funcs or id(original_node) in self._inner \
                or id(original_node) in self.ctx.handled:
            return updated_node
        qual = self.scope.resolve_torch(original_node)
        if qual is None:
            return updated_node
        entry = self.ctx.registry.lookup(qual)
        target = entry.resolve(self.ctx.options.target)[0] if entry is not None else None
        if entry is None or target is None or not entry.supported or target.startswith("."):
            self.flag(original_node, "MP104", f"{qual} is referenced but has no MindSpore mapping",
                      "convert by hand, or add an entry to mindport/mappings/data", qual)
            return updated_node
        if entry.kind != "attribute" and (entry.rename or entry.emit or entry.transforms or entry.values
                                          or entry.drop or entry.unsupported):
            self.flag(original_node, "MP104", f"{qual} is passed by reference; its arguments need mapping",
                      "call it directly so its arguments can be converted", qual)
            return updated_node
        self.ctx.converted_sites += 1
        return self.ctx.target_expr(target)

    def leave_Attribute(self, original_node, updated_node):
        return self._reference(original_node, updated_node)

    def leave_Name(self, original_node, updated_node):
        return self._reference(original_node, updated_node)


def _keyed(subscript: cst.Subscript) -> bool:
    """``state["buf"]``: a string key, so a mapping's item (the tensor itself), not a view of a tensor."""
    elements = subscript.slice
    return len(elements) == 1 and isinstance(elements[0].slice, cst.Index) \
        and isinstance(elements[0].slice.value, (cst.SimpleString, cst.ConcatenatedString))


def resolve_ms_names(ctx, mapped: dict[str, Arg]) -> None:
    """A transform may write a full MindSpore name (``mindspore.int64``) in an argument it builds: replace it by
    the converted code's alias (``ms.int64``) and schedule the import."""
    for name, arg in mapped.items():
        if arg.node is None and arg.source != _VARARGS and "mindspore." in arg.source:
            source = _MS_NAME.sub(lambda m: ctx.target_text(m.group(0)), arg.source)
            mapped[name] = Arg(source, arg.given, None, arg.cst_arg)


def _parenthesize(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
