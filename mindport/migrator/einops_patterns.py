"""einops calls with a literal pattern, compiled at conversion time into MindSpore operations.

``rearrange(x, 'b (h w) c -> b c h w', h=h)`` becomes
``ops.transpose(ops.reshape(x, (x.shape[0], h, x.shape[1] // h, x.shape[2])), (0, 3, 1, 2))``: explicit
``reshape``/``transpose``/reduction/``expand_dims``+``broadcast_to`` operations whose unnamed lengths are read from the
tensor's shape at run time. The result imports nothing but MindSpore's ``ops`` and compiles in a static graph (shape
tuples, their slices and integer arithmetic are constants there). A call that can't be compiled here (a pattern that
is not a string literal, a callable reduction, a pattern einops itself rejects) is left to the run-time path
(``mindport.runtime.einops_backend``), which gives einops' own behaviour and errors.

Pure and standalone: no libcst, no MindSpore; the converter rule that rewrites the calls decides what the arguments
are (the tensor expression and the keyword values as source text) and where ``ops`` comes from.

What the compiled code does not check (einops does, at run time): that an axis given as a keyword matches a single
dimension it names (``rearrange(x, 'b h w -> b (h w)', h=4)`` on an input whose second dimension is not 4), and the
shape of a tensor whose dimensions are all given; a wrong length then fails in ``reshape`` or silently picks the
keyword's value. The input must be a tensor: einops also takes a list of tensors (stacked first), which can only be
told apart from a tensor at run time, so a list display (``[a, b]``) is stacked and any other expression is taken
to be a tensor.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

FUNCTIONS = ("rearrange", "reduce", "repeat")
_REDUCTIONS = {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin", "prod": "prod", "any": "any",
               "all": "all"}
_TOKEN = re.compile(r"\.\.\.|\(|\)|[^\s()]+")


class _Unsupported(Exception):
    """The call stays on the run-time path."""


@dataclass(frozen=True)
class _Axis:
    key: str  # the name, "..." for the ellipsis, "#n:i" for the i-th anonymous axis of length n
    number: int | None = None  # length of an anonymous axis

    @property
    def ellipsis(self) -> bool:
        return self.key == "..."


@dataclass
class _Group:
    axes: list[_Axis] = field(default_factory=list)
    parenthesized: bool = False


def _parse_side(text: str, side: str, counter: list[int]) -> list[_Group]:
    groups: list[_Group] = []
    current: _Group | None = None
    seen: set[str] = set()
    for token in _TOKEN.findall(text.replace("…", "...")):
        if token == "(":
            if current is not None:
                raise _Unsupported("nested parentheses")
            current = _Group(parenthesized=True)
        elif token == ")":
            if current is None:
                raise _Unsupported("unbalanced parenthesis")
            groups.append(current)
            current = None
        else:
            if token == "...":
                axis = _Axis("...")
            elif token.isdecimal():
                if int(token) == 1:  # a unit axis: an empty group outside parentheses, nothing inside them
                    if current is None:
                        groups.append(_Group(parenthesized=False))
                    continue
                counter[0] += 1
                axis = _Axis(f"#{int(token)}:{counter[0]}", int(token))
            elif token.isidentifier() and not token.startswith("_") and not token.endswith("_"):
                axis = _Axis(token)
            else:
                raise _Unsupported(f"axis {token!r}")
            if axis.key in seen:
                raise _Unsupported(f"{axis.key!r} twice on the {side} side")
            seen.add(axis.key)
            if current is None:
                groups.append(_Group([axis]))
            else:
                current.axes.append(axis)
    if current is not None:
        raise _Unsupported("unbalanced parenthesis")
    return groups


def _names(groups: list[_Group]) -> set[str]:
    return {a.key for g in groups for a in g.axes if a.number is None and not a.ellipsis}


def _has_ellipsis(groups: list[_Group]) -> bool:
    return any(a.ellipsis for g in groups for a in g.axes)


def _is_pure(source: str) -> ast.expr:
    """The expression's tree; raises when it is not an expression."""
    try:
        return ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        raise _Unsupported(f"not an expression: {source!r}") from None


def _no_calls(tree: ast.AST) -> bool:
    return not any(isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom,
                                  ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) for n in ast.walk(tree))


def _atom(source: str) -> str:
    """``source`` safe to use as an operand of ``*`` and ``//``."""
    tree = ast.parse(source, mode="eval").body
    if isinstance(tree, (ast.Name, ast.Attribute, ast.Constant, ast.Subscript, ast.Call)) and not (
            isinstance(tree, ast.Constant) and isinstance(tree.value, (int, float)) and tree.value < 0):
        return source
    return f"({source})"


def _product(parts: list[str]) -> str:
    if not parts:
        return "1"
    if len(parts) == 1:
        return parts[0]
    return " * ".join(_atom(p) for p in parts)


def _tuple(parts: list[str]) -> str:
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


class _Shape:
    """A shape as source: constant-length pieces and at most one run-time tuple (the ellipsis dimensions)."""

    def __init__(self) -> None:
        self.pieces: list[tuple[str, str]] = []  # ("dim", source) | ("tuple", source)

    def dim(self, source: str) -> None:
        self.pieces.append(("dim", source))

    def tuple(self, source: str) -> None:
        self.pieces.append(("tuple", source))

    def source(self) -> str:
        out: list[str] = []
        dims: list[str] = []
        for kind, src in self.pieces:
            if kind == "dim":
                dims.append(src)
            else:
                if dims:
                    out.append(_tuple(dims))
                    dims = []
                out.append(src)
        if dims or not out:
            out.append(_tuple(dims))
        return " + ".join(out)


def compile_einops(function: str, pattern: str, axes_lengths: dict[str, str], tensor: str, ops: str = "ops",
                   reduction: str | None = None) -> str | None:
    """MindSpore source for ``einops.<function>(tensor, pattern[, reduction], **axes_lengths)``, or None when the
    call should stay on the run-time path.

    ``function``: "rearrange", "reduce" or "repeat"; ``pattern``: the pattern's text; ``axes_lengths``: the keyword
    arguments as source text (``{"h": "self.heads"}``); ``tensor``: the tensor argument's source; ``ops``: the name
    ``mindspore.ops`` is bound to in the converted file; ``reduction``: reduce's reduction, the text of a string
    literal (``"mean"``), None for anything else.
    """
    try:
        return _Compiler(function, pattern, dict(axes_lengths), tensor, ops, reduction).compile()
    except _Unsupported:
        return None


class _Compiler:
    def __init__(self, function, pattern, axes_lengths, tensor, ops, reduction) -> None:
        if function not in FUNCTIONS:
            raise _Unsupported(function)
        if function == "reduce" and reduction not in _REDUCTIONS:
            raise _Unsupported(f"reduction {reduction!r}")
        if pattern.count("->") != 1:
            raise _Unsupported("no single '->'")
        self.function, self.ops, self.reduction = function, ops, reduction
        left_text, right_text = pattern.split("->")
        counter = [0]
        self.left = _parse_side(left_text, "left", counter)
        self.right = _parse_side(right_text, "right", counter)
        self.kwargs = axes_lengths
        self.tensor_tree = _is_pure(tensor)
        for name, src in axes_lengths.items():
            if not name.isidentifier():
                raise _Unsupported(name)
            _is_pure(src)
        self.tensor_src = tensor.strip()
        self._check()

    # ---- what einops accepts -------------------------------------------------------------------------------
    def _check(self) -> None:
        left, right = self.left, self.right
        if any(a.ellipsis for g in left if g.parenthesized for a in g.axes):
            raise _Unsupported("ellipsis in parentheses on the left")
        if _has_ellipsis(right) and not _has_ellipsis(left):
            raise _Unsupported("ellipsis on the right only")
        if _has_ellipsis(left) and not _has_ellipsis(right) and self.function != "reduce":
            raise _Unsupported("ellipsis on the left only")
        lnames, rnames = _names(left), _names(right)
        left_anonymous = any(a.number is not None for g in left for a in g.axes)
        right_anonymous = any(a.number is not None for g in right for a in g.axes)
        if self.function == "rearrange":
            if lnames != rnames or left_anonymous or right_anonymous:
                raise _Unsupported("rearrange: axes differ")
        elif self.function == "repeat":
            if not lnames <= rnames or left_anonymous:
                raise _Unsupported("repeat: axes on the left only")
            if not (rnames - lnames) <= set(self.kwargs):
                raise _Unsupported("repeat: a new axis has no length")
        elif not rnames <= lnames or right_anonymous:
            raise _Unsupported("reduce: axes on the right only")
        if not set(self.kwargs) <= lnames | rnames:
            raise _Unsupported("a keyword names no axis")

    # ---- source ---------------------------------------------------------------------------------------------
    def compile(self) -> str:
        t_name = "t"
        kw_sources = " ".join(self.kwargs.values())
        while re.search(rf"\b{t_name}\b", kw_sources) or t_name in self.kwargs or t_name == self.ops:
            t_name += "_"
        bound_kwargs = {n: s for n, s in self.kwargs.items() if not _no_calls(_is_pure(s))}
        for name in bound_kwargs:  # a lambda parameter named after the axis must not hide a name used inline
            if any(re.search(rf"\b{name}\b", s) for n, s in self.kwargs.items() if n not in bound_kwargs) or \
                    name == self.ops:
                raise _Unsupported(f"keyword {name} shadows a name")
        tensor_is_list = isinstance(self.tensor_tree, (ast.List, ast.Tuple))
        self.t = t_name
        body = self._body()
        uses = len(re.findall(rf"\b{t_name}\b", body))
        # a name, attribute or subscript without calls is repeated as written; anything else is evaluated once
        simple = isinstance(self.tensor_tree, (ast.Name, ast.Attribute, ast.Subscript)) and _no_calls(self.tensor_tree)
        tensor = f"{self.ops}.stack({self.tensor_src})" if tensor_is_list else self.tensor_src
        if uses <= 1 and not bound_kwargs:
            return re.sub(rf"\b{t_name}\b", lambda _: tensor, body) if uses else body
        if simple and not bound_kwargs:
            return re.sub(rf"\b{t_name}\b", lambda _: self.tensor_src, body)
        params = [t_name, *bound_kwargs]
        args = [tensor, *bound_kwargs.values()]
        return f"(lambda {', '.join(params)}: {body})({', '.join(args)})"

    def _length(self, axis: _Axis) -> str | None:
        if axis.number is not None:
            return str(axis.number)
        if axis.key in self.kwargs:
            src = self.kwargs[axis.key]
            tree = _is_pure(src)
            return axis.key if not _no_calls(tree) else src.strip()  # a bound keyword is a lambda parameter
        return self.lengths.get(axis.key)

    def _body(self) -> str:
        t, ops = self.t, self.ops
        left, right = self.left, self.right
        n_left = len(left)
        ell_at = next((i for i, g in enumerate(left) if any(a.ellipsis for a in g.axes)), None)
        # input dimension of left group i: its index, negative after the ellipsis
        def dim_index(i: int) -> str:
            return str(i) if ell_at is None or i < ell_at else str(i - n_left)

        ell_slice = None
        if ell_at is not None:
            after = n_left - ell_at - 1
            ell_slice = f"{t}.shape[{ell_at or ''}:{-after if after else ''}]"
        # lengths of named axes, from the keywords and the input shape
        self.lengths: dict[str, str] = {}
        elementary: list[_Axis] = []
        need_init = False
        for i, group in enumerate(left):
            elementary.extend(group.axes)
            if len(group.axes) != 1:
                need_init = True
            if group.axes and group.axes[0].ellipsis:
                continue
            unknown = [a for a in group.axes if a.number is None and a.key not in self.kwargs]
            if len(unknown) > 1:
                raise _Unsupported("two unknown lengths in one group")
            if unknown:
                dim = f"{t}.shape[{dim_index(i)}]"
                known = [self._length(a) for a in group.axes if a is not unknown[0]]
                self.lengths[unknown[0].key] = f"{dim} // {_atom(_product(known))}" if known else dim
        for name in self.kwargs:
            self.lengths.setdefault(name, self._length(_Axis(name)))

        def shape_of(axes: list[_Axis]) -> _Shape:
            shape = _Shape()
            for a in axes:
                if a.ellipsis:
                    shape.tuple(ell_slice)
                else:
                    shape.dim(self._length(a))
            return shape

        expr = t
        if need_init:
            expr = f"{ops}.reshape({expr}, {shape_of(elementary).source()})"
        # reduce: the axes not on the right, by position (negative after the ellipsis)
        right_keys = [a.key for g in right for a in g.axes]
        kept = [a for a in elementary if a.key in right_keys]
        if self.function == "reduce":
            reduced = [i for i, a in enumerate(elementary) if a.key not in right_keys]
            if reduced:
                expr = self._reduce(expr, elementary, reduced)
        # transpose the kept axes into the right side's order
        order = [a for a in (a for g in right for a in g.axes) if a in kept]
        perm = [kept.index(a) for a in order]
        if perm != list(range(len(kept))):
            expr = f"{ops}.transpose({expr}, {self._positions(kept, perm)})"
        # repeat: new axes (named or anonymous) where they go, broadcast to their lengths
        full = [a for g in right for a in g.axes]
        new = [i for i, a in enumerate(full) if a not in kept]
        if new:
            expr = self._add_axes(expr, full, new)
        # the right side's grouping
        if any(len(g.axes) != 1 or (g.parenthesized and g.axes[0].ellipsis) for g in right):
            shape = _Shape()
            for g in right:
                if not g.axes:
                    shape.dim("1")
                elif any(a.ellipsis for a in g.axes):
                    if g.parenthesized:
                        shape.dim("-1")  # the ellipsis dimensions (and the rest of the group) flattened
                    else:
                        shape.tuple(ell_slice)
                else:
                    shape.dim(_product([self._length(a) for a in g.axes]))
            expr = f"{ops}.reshape({expr}, {shape.source()})"
        return expr

    def _positions(self, axes: list[_Axis], indices: list[int]) -> str:
        """A tuple of axis positions of ``axes`` (the ellipsis expanded, positions after it negative)."""
        ell = next((i for i, a in enumerate(axes) if a.ellipsis), None)
        pieces: list[str] = []
        consts: list[str] = []
        for i in indices:
            if ell is None or i < ell:
                consts.append(str(i))
            elif i > ell:
                consts.append(str(i - len(axes)))
            else:
                if consts:
                    pieces.append(_tuple(consts))
                    consts = []
                after = len(axes) - ell - 1
                # the ellipsis dimensions of a tensor with these axes: from ell to (ndim - after)
                n_left = len(self.left)
                ndim = f"{self.t}.ndim + {len(axes) - n_left}" if len(axes) != n_left else f"{self.t}.ndim"
                stop = f"{ndim} - {after}" if after else ndim
                pieces.append(f"tuple(range({ell}, {stop}))")
        if consts or not pieces:
            pieces.append(_tuple(consts))
        return " + ".join(pieces)

    def _reduce(self, expr: str, elementary: list[_Axis], reduced: list[int]) -> str:
        ops, op = self.ops, _REDUCTIONS[self.reduction]
        axes = self._positions(elementary, reduced)
        if op == "prod":  # torch's prod of integers (and bools) is int64; MindSpore's keeps the dtype
            return (f"(lambda r: {ops}.prod(r if r.is_floating_point() else r.astype('int64'), {axes}))({expr})"
                    if not re.fullmatch(r"\w+", expr) else
                    f"{ops}.prod({expr} if {expr}.is_floating_point() else {expr}.astype('int64'), {axes})")
        return f"{ops}.{op}({expr}, {axes})"

    def _add_axes(self, expr: str, full: list[_Axis], new: list[int]) -> str:
        ops = self.ops
        ell = next((i for i, a in enumerate(full) if a.ellipsis), None)
        before = [i for i in new if ell is None or i < ell]
        after = sorted((i for i in new if ell is not None and i > ell), reverse=True)
        for i in before:
            expr = f"{ops}.expand_dims({expr}, {i})"
        for i in after:
            expr = f"{ops}.expand_dims({expr}, {i - len(full)})"
        shape = _Shape()
        for i, a in enumerate(full):
            if a.ellipsis:
                n_left = len(self.left)
                count = f"{self.t}.ndim - {n_left - 1}" if n_left > 1 else f"{self.t}.ndim"
                shape.tuple(f"(-1,) * ({count})")
            else:
                shape.dim(self._length(a) if i in new else "-1")
        return f"{ops}.broadcast_to({expr}, {shape.source()})"
