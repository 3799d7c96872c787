"""Named transforms that mapping entries refer to. This is the only place where mapping logic is code.

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


class Unsupported(Exception):
    """A value that has no MindSpore equivalent; the message says why and what to do."""


def value_code(arg: Any) -> str:
    """The source of a call-site argument's value: a libcst ``Arg``, or the fast path's ``SourceArg`` (``.code``)."""
    code = getattr(arg, "code", None)
    if code is not None:
        return code
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


# ---------------------------------------------------------------------------------------------- value transforms

@value_transform("one_minus")
def one_minus(arg: Arg) -> str:
    """BatchNorm momentum: MindSpore's is the weight of the *old* running value, torch's of the new one."""
    value = arg.literal(default=None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(round(1.0 - value, 12))
    if value is None and arg.source == "None":
        raise Unsupported("momentum=None (cumulative moving average) has no MindSpore equivalent")
    return f"1 - ({arg.source})"


@value_transform("gelu_approximate")
def gelu_approximate(arg: Arg) -> str:
    """torch ``approximate='none'|'tanh'`` -> MindSpore ``approximate=False|True`` (MindSpore defaults to tanh)."""
    value = arg.literal(default=UNKNOWN)
    if value == "none":
        return "False"
    if value == "tanh":
        return "True"
    return f"({arg.source}) == 'tanh'"


# ----------------------------------------------------------------------------------------------- call transforms

@call_transform("conv_padding")
def conv_padding(args: dict[str, Arg]) -> None:
    """torch ``padding`` (int, tuple, 'same', 'valid') -> MindSpore ``pad_mode`` + ``padding``.

    MindSpore defaults to ``pad_mode='same'``; torch's ``padding=0`` is ``'valid'``. A 2-D tuple ``(ph, pw)`` becomes
    the 4-tuple ``(ph, ph, pw, pw)`` MindSpore's Conv2d expects; 3-D ``(pd, ph, pw)`` a 6-tuple.
    """
    mode = args.pop("padding_mode", None)
    if mode is not None and mode.literal(default=None) not in ("zeros", None):
        raise Unsupported(f"padding_mode={mode.source}: MindSpore convolutions only zero-pad; pad with ops.pad first")
    padding = args.get("padding")
    value = padding.literal(default=UNKNOWN) if padding is not None else 0
    if value == "same":
        args.pop("padding")
        args["pad_mode"] = new("'same'")
    elif value == "valid" or value == 0 or value == (0, 0) or value == (0, 0, 0) or value == [0, 0]:
        args.pop("padding", None)
        args["pad_mode"] = new("'valid'")
    elif isinstance(value, int):
        args["pad_mode"] = new("'pad'")
        args["padding"] = new(repr(value))
    elif isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        doubled = tuple(v for v in value for _ in (0, 1))
        args["pad_mode"] = new("'pad'")
        args["padding"] = new(repr(doubled if len(value) > 1 else value[0]))
    elif value is UNKNOWN:
        # A variable: decide at run time, keeping the converted code exact for ints and tuples.
        src = padding.source
        args["pad_mode"] = new(f"('valid' if {src} in (0, 'valid') else 'same' if {src} == 'same' else 'pad')")
        args["padding"] = new(f"(0 if isinstance({src}, str) else tuple(v for v in {src} for _ in (0, 1)) "
                              f"if isinstance({src}, (tuple, list)) else {src})")
    else:
        raise Unsupported(f"padding={padding.source} is not an int, a tuple of ints, 'same' or 'valid'")


def fill_stride_from_kernel(args: dict[str, Arg]) -> None:
    """torch pooling's ``stride=None`` means kernel_size (MindSpore's default is 1); a variable stride may be None
    at run time, so it gets the same fallback there."""
    stride = args.get("stride")
    if stride is None or stride.source == "None":
        args["stride"] = new(args["kernel_size"].source)
    elif not stride.is_literal():
        args["stride"] = new(f"({stride.source} if {stride.source} is not None else {args['kernel_size'].source})")


@call_transform("pool_stride")
def pool_stride(args: dict[str, Arg]) -> None:
    """Pooling: torch's stride defaults to kernel_size (MindSpore's to 1); padding needs ``pad_mode='pad'``."""
    fill_stride_from_kernel(args)
    padding = args.get("padding")
    needs_pad = False
    for key in ("padding", "ceil_mode", "dilation", "return_indices"):
        if key in args and args[key].given:
            needs_pad = True
    if padding is not None and padding.literal(default=1) == 0 and not any(
        args[k].given for k in ("ceil_mode", "dilation", "return_indices") if k in args
    ):
        needs_pad = False
        args.pop("padding")
    args["pad_mode"] = new("'pad'" if needs_pad else "'valid'")
    for key in ("ceil_mode", "dilation", "return_indices"):
        if key in args and not args[key].given:
            args.pop(key)


@call_transform("layer_norm_axes")
def layer_norm_axes(args: dict[str, Arg]) -> None:
    """LayerNorm normalises the last ``len(normalized_shape)`` axes; MindSpore takes begin axes (``-1`` only for one
    axis, as the CPU kernel rejects other negative axes) — a multi-axis shape needs the input rank, so it is computed
    at run time by the generated ``begin_norm_axis=-k`` only when k == 1."""
    shape = args["normalized_shape"]
    value = shape.literal(default=UNKNOWN)
    if isinstance(value, int):
        args["normalized_shape"] = new(f"({value},)")
        return
    if isinstance(value, (tuple, list)):
        args["normalized_shape"] = new(repr(tuple(value)))
        if len(value) > 1:
            raise Unsupported(
                f"normalized_shape={shape.source} spans {len(value)} axes: MindSpore LayerNorm needs a positive "
                "begin_norm_axis = input rank - len(normalized_shape); set begin_norm_axis/begin_params_axis by hand"
            )
        return
    args["normalized_shape"] = new(f"(({shape.source},) if isinstance({shape.source}, int) else tuple({shape.source}))")


# --------------------------------------------------------------------------------------------- weight transforms

@weight_transform("conv1d_reshape")
def conv1d_reshape(array, target_shape):
    """Conv1d weights are 4-D in MindSpore: (out, in/group, 1, k) for torch's (out, in/group, k)."""
    return array.reshape(target_shape)


# Area modules register their own transforms with the decorators above (one module per area, so a new API's
# transform sits beside its kin). Imported last: they import the registries from here.
from mindport.mappings import (  # noqa: E402,F401
    transforms_functions,
    transforms_layers,
    transforms_optim,
    transforms_tensor,
)
