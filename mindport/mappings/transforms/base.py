"""The registries of named transforms and the helpers they are written with (the transforms themselves are in
the area modules beside this one: this package is the only place where mapping logic is code).

Three registries, each keyed by the name a TOML entry uses:

* ``VALUE_TRANSFORMS[name](arg) -> str`` rewrites one argument's value (``momentum = "one_minus"``).
* ``CALL_TRANSFORMS[name](args) -> None`` rewrites the whole argument set of a call in place, after renames
  (``transforms = ["conv_padding"]``); it raises :class:`Unsupported` when a value has no MindSpore equivalent.
* ``WEIGHT_TRANSFORMS[name](array, target_shape) -> array`` reshapes/converts a torch weight for MindSpore
  (``weight_transforms = { weight = "conv1d_reshape" }``).

Arguments travel as :class:`Arg`: source text plus whether the user wrote it. Transforms never evaluate user code;
they read literals with :func:`ast.literal_eval` and otherwise build source text around the original expression.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable

_NOTHING = object()  # "no default given": Arg.literal raises
UNKNOWN = object()  # what Arg.literal(default=UNKNOWN) returns for a non-literal (a variable, an expression)


TARGET = "<target>"  # key of the mapped arguments that sends a call to another target (an entry's `switch`)


class Unsupported(Exception):
    """A value that has no MindSpore equivalent; the message says why and what to do."""


def value_code(arg: Any) -> str:
    """The source of a call-site argument's value: a libcst ``Arg`` (libcst is loaded only then, so the tables load
    without it), or the runtime adapter's ``mindport.mappings.arguments.Extra``."""
    source = getattr(arg, "source", None)
    if isinstance(source, str):
        return source
    import libcst as cst

    return cst.Module(body=[]).code_for_node(arg.value)


@dataclass
class Arg:
    source: str  # Python source of the value
    given: bool = True  # False when it is the torch default, filled in by the engine
    node: Any = None  # the original libcst value node when unchanged (keeps comments and layout)
    cst_arg: Any = None  # the original libcst Arg (keeps its comma and whitespace)

    def literal(self, default: Any = _NOTHING) -> Any:
        """The value when the source is a literal; ``default`` (or raise ValueError) otherwise."""
        try:
            return ast.literal_eval(self.source)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            if default is _NOTHING:
                raise ValueError(f"not a literal: {self.source}") from None
            return default

    def is_literal(self) -> bool:
        return self.literal(default=UNKNOWN) is not UNKNOWN

    @property
    def operand(self) -> str:
        """The source as an operand inside a larger expression a transform writes: an atom or a primary (a name,
        attribute, call, subscript, literal, display) as written, anything else in parentheses. Interpolating
        ``a if c else b`` bare into ``{src} in (0, 'valid')`` or ``for v in {src}`` changes its meaning or does
        not parse."""
        try:
            node = ast.parse(self.source.strip(), mode="eval").body
        except SyntaxError:
            return f"({self.source})"
        return self.source if isinstance(node, _OPERANDS) else f"({self.source})"


_OPERANDS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Dict, ast.Set,
             ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.JoinedStr)


def new(source: str) -> Arg:
    """An argument the transform adds (emitted even when equal to a default)."""
    return Arg(source=source, given=True)


VALUE_TRANSFORMS: dict[str, Callable[[Arg], str]] = {}
CALL_TRANSFORMS: dict[str, Callable[[dict[str, Arg]], None]] = {}
WEIGHT_TRANSFORMS: dict[str, Callable] = {}


def value_transform(name: str):
    def register(fn):
        VALUE_TRANSFORMS[name] = fn
        return fn
    return register


def call_transform(name: str):
    def register(fn):
        CALL_TRANSFORMS[name] = fn
        return fn
    return register


def weight_transform(name: str):
    def register(fn):
        WEIGHT_TRANSFORMS[name] = fn
        return fn
    return register
