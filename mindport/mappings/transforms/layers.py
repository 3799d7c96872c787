"""Named transforms for the layers mapping entries (see mindport.mappings.transforms for the three registries)."""
from __future__ import annotations

import ast
import re

from mindport.mappings.transforms.base import (
    TARGET,
    UNKNOWN,
    Arg,
    Unsupported,
    call_transform,
    new,
    value_transform,
    weight_transform,
)


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


@value_transform("one_minus_or_cumulative")
def one_minus_or_cumulative(arg: Arg) -> str:
    """BatchNorm1d/2d/3d momentum: :func:`one_minus`, and ``None`` (torch's cumulative moving average) kept as
    ``None`` for the entry's ``cumulative_batch_norm*`` call transform, which sends the call to the runtime layer that
    averages that way."""
    if arg.literal(default=0.1) is None and arg.source == "None":
        return "None"
    return one_minus(arg)


def _cumulative(args: dict[str, Arg], runtime: str) -> None:
    momentum = args.get("momentum")
    if momentum is not None and momentum.source == "None":
        args[TARGET] = new(runtime)


@call_transform("cumulative_batch_norm1d")
def cumulative_batch_norm1d(args: dict[str, Arg]) -> None:
    """``nn.BatchNorm1d(n, momentum=None)`` -> ``mindport.runtime.layers.CumulativeBatchNorm1d`` (MindSpore's
    arguments and parameter names, torch's cumulative running statistics); any other momentum stays MindSpore's."""
    _cumulative(args, "mindport.runtime.layers.CumulativeBatchNorm1d")


@call_transform("cumulative_batch_norm2d")
def cumulative_batch_norm2d(args: dict[str, Arg]) -> None:
    """``nn.BatchNorm2d(n, momentum=None)`` -> ``mindport.runtime.layers.CumulativeBatchNorm2d``."""
    _cumulative(args, "mindport.runtime.layers.CumulativeBatchNorm2d")


@call_transform("cumulative_batch_norm3d")
def cumulative_batch_norm3d(args: dict[str, Arg]) -> None:
    """``nn.BatchNorm3d(n, momentum=None)`` -> ``mindport.runtime.layers.CumulativeBatchNorm3d``."""
    _cumulative(args, "mindport.runtime.layers.CumulativeBatchNorm3d")


@value_transform("batch_statistics_only")
def batch_statistics_only(arg: Arg) -> str:
    """BatchNorm ``track_running_stats=False`` (batch statistics in training and in eval, no running statistics)
    -> MindSpore ``use_batch_statistics=True`` (batch statistics in both modes: torch's values to 5e-7; its moving
    statistics exist but are never read); ``True`` -> ``None`` (batch statistics in training, moving ones in eval)."""
    value = arg.literal(default=UNKNOWN)
    if isinstance(value, bool):
        return "None" if value else "True"
    return f"None if {arg.operand} else True"


@value_transform("gelu_approximate")
def gelu_approximate(arg: Arg) -> str:
    """torch ``approximate='none'|'tanh'`` -> MindSpore ``approximate=False|True`` (MindSpore defaults to tanh)."""
    value = arg.literal(default=UNKNOWN)
    if value == "none":
        return "False"
    if value == "tanh":
        return "True"
    return f"({arg.source}) == 'tanh'"


# torch's size arguments (``_size_2_t``: an int or any sequence of ints) and dimension lists (``dim=[1, 2, 3]``);
# MindSpore checks an int or a tuple and refuses a list ("When expanding an int number to tuple, input type must be
# integer or tuple[int], but got list": nn.Conv2d, nn.MaxPool2d, ops.conv2d, nn.AdaptiveAvgPool2d, ops.mean's axis
# ... alike). Every entry's arguments of these names go through their transform
# (mindport.mappings.arguments.map_arguments), before the entry's own transforms.
# A layer's integer sizes computed with numpy (``nn.Conv1d(c, c, np.prod(ks))``, ``nn.Linear(np.prod(shape), n)``):
# torch takes a numpy integer wherever it takes an int, MindSpore's layer checks refuse it ("must be int, but got
# int64"); the same names' sizes above take the same reading first.
IMPLICIT_VALUES = {**dict.fromkeys(("kernel_size", "stride", "padding", "dilation", "output_padding", "output_size"),
                                   "layers_size_tuple"),
                   **dict.fromkeys(("dim", "dims"), "layers_dims_tuple"),
                   **dict.fromkeys(("in_channels", "out_channels", "in_features", "out_features", "num_features",
                                    "num_embeddings", "embedding_dim", "input_size", "hidden_size", "num_layers",
                                    "embed_dim", "num_heads", "num_groups", "num_channels", "d_model", "nhead",
                                    "dim_feedforward", "upscale_factor", "downscale_factor"), "layers_numpy_int")}

# numpy functions that give one number of an array (or a numpy scalar type's constructor): their result as a size.
_NUMPY_SCALARS = frozenset({"prod", "product", "sum", "max", "min", "amax", "amin", "int64", "int32", "int16", "int8",
                            "uint8", "int_", "intp", "floor", "ceil", "round", "rint", "argmax", "argmin", "size",
                            "count_nonzero", "lcm", "gcd"})


def _numpy_number(source: str) -> bool:
    """``np.prod(ks)``, ``numpy.sum(x)``, ``np.cumprod(s)[-1]``: an expression that is a numpy number by its form
    (a call of one of numpy's reductions or scalar types, or one element of a numpy call's result)."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Slice, ast.Tuple)):
        inner = node.value
        return isinstance(inner, ast.Call) and _numpy_attribute(inner.func) is not None
    return isinstance(node, ast.Call) and _numpy_attribute(node.func) in _NUMPY_SCALARS


def _numpy_attribute(func) -> str | None:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("np", "numpy"):
        return func.attr
    return None


@value_transform("layers_numpy_int")
def layers_numpy_int(arg: Arg) -> str:
    """A size that is a numpy number by its form as the int torch reads from it (``int(np.prod(ks))``)."""
    return f"int({arg.source})" if _numpy_number(arg.source) else arg.source


@value_transform("layers_size_tuple")
def layers_size_tuple(arg: Arg) -> str:
    """A list (``stride=[2, 2]``, EfficientNet's block arguments decoded from strings; ``kernel_size=[h, w]``) as a
    tuple, and a one-element size (``[1]``, ``(3,)``, ``[k]``) as its element, which torch expands to every dimension
    and MindSpore refuses ("input tuple dimension must be 2, but got (1,)"). The runtime adapter passes run-time
    values as literals, so ``Conv2d(c, c, k, stride=s)`` with ``s = [1]`` is mapped too."""
    value = arg.literal(default=UNKNOWN)
    if isinstance(value, (list, tuple)) and len(value) == 1 and isinstance(value[0], int):
        return repr(value[0])  # torch expands a one-element size to every dimension (stride=[1] in a Conv2d)
    if value is UNKNOWN and _numpy_number(arg.source):
        return f"int({arg.source})"  # kernel_size=np.prod(ks): a numpy integer (see IMPLICIT_VALUES)
    return _as_tuple(arg, value, single=True)


@value_transform("adaptive_output_size")
def adaptive_output_size(arg: Arg) -> str:
    """An adaptive pooling layer's ``output_size`` (2-D and 3-D): as ``layers_size_tuple`` for what the source
    shows; a value held in a name, attribute or subscript (``nn.AdaptiveAvgPool2d(h_w)``, muzero-general's
    ``DownsampleCNN(..., h_w)`` with ``h_w = [6, 6]``) may be a list at run time, which torch takes and MindSpore's
    layer refuses ("the type of 'output_size' should be one of '['int', 'tuple']', but got type 'list'"): a list
    there is handed on as the tuple of its elements, an int or a tuple as it is (written inline: the layer is
    MindSpore's own)."""
    source = layers_size_tuple(arg)
    if source != arg.source or arg.is_literal():
        return source
    try:
        node = ast.parse(arg.source.strip(), mode="eval").body
    except SyntaxError:
        return source
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        value = arg.source.strip()
        return f"tuple({value}) if isinstance({value}, list) else {value}"
    return source


@value_transform("layers_dims_tuple")
def layers_dims_tuple(arg: Arg) -> str:
    """Dimensions given as a list (``w.mean(dim=[1, 2, 3], keepdim=True)``: BiT's weight standardisation), a literal
    or a display of names, as a tuple: the same dimensions to torch, and what MindSpore's axis takes."""
    return _as_tuple(arg, arg.literal(default=UNKNOWN))


def _as_tuple(arg: Arg, value, single: bool = False) -> str:
    """A list literal (``value``, the argument's literal) or a list display as a tuple; with ``single``, a display of
    one element as that element. Anything else as written."""
    if isinstance(value, list):
        return repr(_tuples(value))
    elements = _list_display(arg.source) if value is UNKNOWN else None
    if not elements:
        return _list_expression_as_tuple(arg.source) if value is UNKNOWN else arg.source
    if single and len(elements) == 1:
        return elements[0]
    return f"({', '.join(elements)}{',' * (len(elements) == 1)})"


def _list_display(source: str) -> list[str] | None:
    """The element sources of a list display (``[h, w]``), else None (a comprehension, a name, a starred list)."""
    if not source.startswith("["):
        return None
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.List) or any(isinstance(e, ast.Starred) for e in node.elts):
        return None
    return [ast.get_source_segment(source, e) for e in node.elts]


def _list_expression_as_tuple(source: str) -> str:
    """A list built by an expression the source shows (``[k // 2 for _ in range(4)]``, ``[k // 2] * 4``,
    ``list(sizes)``) as the same elements in a tuple, which MindSpore takes where it refuses a list (PackNet's
    ``nn.ConstantPad2d(padding=[k // 2] * 4, value=0)``); anything else as written."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return source
    text = source.strip()
    if isinstance(node, ast.ListComp):  # [e for x in y] -> tuple(e for x in y)
        return f"tuple({text[1:-1]})"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list" \
            and len(node.args) <= 1 and not node.keywords:
        return f"tuple({ast.get_source_segment(text, node.args[0]) if node.args else ''})"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and "\n" not in text:
        for side in (node.left, node.right):
            segment = ast.get_source_segment(text, side)
            elements = _list_display(segment) if isinstance(side, ast.List) else None
            if elements:  # [k // 2] * 4 -> (k // 2,) * 4
                start = side.col_offset
                return f"{text[:start]}({', '.join(elements)}{',' * (len(elements) == 1)}){text[side.end_col_offset:]}"
    return source


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value


# ----------------------------------------------------------------------------------------------- call transforms

@call_transform("lp_norm_finite")
def lp_norm_finite(args: dict[str, Arg]) -> None:
    """LPPool / lp_pool with norm_type=inf: MindSpore 2.10 computes x**inf and answers 1 everywhere, where torch
    answers the window's largest power mean; no equivalent argument, so the call is flagged."""
    norm = args.get("norm_type")
    if norm is not None and "inf" in norm.source.lower():
        raise Unsupported("norm_type=inf: MindSpore's LPPool gives 1 everywhere for it; pool abs(x) with max_pool "
                          "by hand")


def _known_mode(mode: Arg | None) -> None:
    """A ``padding_mode`` given by a name (``nn.Conv3d(c, c, 3, padding_mode=mode)``) may hold 'reflect', which
    MindSpore's convolutions cannot do: the call is decided when it happens (the runtime adapter builds it for 'zeros'
    and raises for the others), never converted as if it were 'zeros'."""
    if mode is not None and mode.literal(default=UNKNOWN) is UNKNOWN:
        from mindport.mappings.arguments import RunTimeArguments  # (arguments imports the transforms)

        raise RunTimeArguments(f"padding_mode={mode.source}: MindSpore convolutions only zero-pad")


def _number_by_form(source: str) -> bool:
    """An expression that can only be a number: ``(k - 1) // 2``, ``k // 2``, ``d * (k - 1) // 2`` (floor division,
    subtraction or remainder at the top; a tuple or a string refuses those), a sum with a number written in it
    (``1 + i``, ``k // 2 + 1``: a tuple or a string plus a number raises, in torch too; a product does not count,
    ``2 * p`` repeats a tuple), or a size read (``x.size(1)``)."""
    from mindport.mappings.transforms.functions import _int_by_form

    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return False

    def number(operand) -> bool:
        return isinstance(operand, ast.Constant) and type(operand.value) in (int, float)

    return (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Sub, ast.Mod))) or \
        (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (number(node.left) or number(node.right))) \
        or _int_by_form(node)


@call_transform("conv_padding")
def conv_padding(args: dict[str, Arg], dims: int | None = None) -> None:
    """torch ``padding`` (int, tuple, 'same', 'valid') -> MindSpore ``pad_mode`` + ``padding``.

    MindSpore defaults to ``pad_mode='same'``; torch's ``padding=0`` is ``'valid'``. A 2-D tuple ``(ph, pw)`` becomes
    the 4-tuple ``(ph, ph, pw, pw)`` MindSpore's Conv2d expects; 3-D ``(pd, ph, pw)`` a 6-tuple.

    ``dims`` (a layer's spatial dimensions): torch keeps ``padding='valid'`` as the string and ``padding=0`` as
    zeros, which MindSpore's ``pad_mode='valid'`` alone cannot tell apart on read. The string becomes
    ``pad_mode='valid'`` with MindSpore's explicit all-zero padding tuple (``(0, 0, 0, 0)`` for a Conv2d; the same
    convolution), which the surface data's derived ``padding`` reads back as ``'valid'`` (object_surface.toml).
    """
    mode = args.pop("padding_mode", None)
    _known_mode(mode)
    if mode is not None and mode.literal(default=None) not in ("zeros", None):
        raise Unsupported(f"padding_mode={mode.source}: MindSpore convolutions only zero-pad; pad with ops.pad first")
    padding = args.get("padding")
    value = padding.literal(default=UNKNOWN) if padding is not None else 0
    if value == "same":
        args.pop("padding")
        args["pad_mode"] = new("'same'")
    elif value == "valid" and dims is not None:
        args["pad_mode"] = new("'valid'")
        args["padding"] = new(repr(_valid_zeros(dims)))
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
    elif value is UNKNOWN and _number_by_form(padding.source):
        args["pad_mode"] = new("'pad'")  # (k - 1) // 2: a number whatever k is (MindSpore takes 'pad' with 0 too)
    elif value is UNKNOWN:
        # A variable: decide at run time, keeping the converted code exact for ints and tuples.
        src = padding.operand
        args["pad_mode"] = new(f"('valid' if {src} in (0, 'valid') else 'same' if {src} == 'same' else 'pad')")
        valid = f"{_valid_zeros(dims)!r} if {src} == 'valid' else " if dims is not None else ""
        args["padding"] = new(f"({valid}0 if isinstance({src}, str) else tuple(sum([[v, v] for v in {src}], [])) "
                              f"if isinstance({src}, (tuple, list)) else {src})")
    else:
        raise Unsupported(f"padding={padding.source} is not an int, a tuple of ints, 'same' or 'valid'")


_PADDING_MODES = ("reflect", "replicate", "circular")


def _valid_zeros(dims: int) -> tuple:
    """MindSpore's explicit no-padding of a ``dims``-D convolution: (begin, end) per spatial axis, all zero (a Conv1d
    is mindport.runtime.layers.Conv1d, which takes the pair and keeps torch's 'valid')."""
    return (0,) * (2 * dims)


def conv_padding_modes(args: dict[str, Arg], dims: int) -> None:
    """:func:`conv_padding` for a ``dims``-D convolution whose entry ``switch``-es torch's other padding modes to
    ``mindport.runtime.layers.ModePadded*``: a literal 'reflect', 'replicate' or 'circular' stays (that Cell pads the
    input in the mode and convolves unpadded, as torch does); padding='same' with one of them is flagged."""
    mode = args.get("padding_mode")
    if mode is None or mode.literal(default=None) not in _PADDING_MODES:
        conv_padding(args, dims)
        return
    padding = args.get("padding")
    if padding is not None and padding.literal(default=UNKNOWN) == "same":
        raise Unsupported(f"padding='same' with padding_mode={mode.source}: give the padding as numbers")
    args.pop("padding_mode")
    conv_padding(args, dims)
    args["padding_mode"] = mode


@call_transform("conv1d_padding_modes")
def conv1d_padding_modes(args: dict[str, Arg]) -> None:
    """:func:`conv_padding_modes` of a Conv1d."""
    conv_padding_modes(args, 1)


@call_transform("conv2d_padding_modes")
def conv2d_padding_modes(args: dict[str, Arg]) -> None:
    """:func:`conv_padding_modes` of a Conv2d."""
    conv_padding_modes(args, 2)


@call_transform("conv3d_padding_modes")
def conv3d_padding_modes(args: dict[str, Arg]) -> None:
    """:func:`conv_padding_modes` of a Conv3d."""
    conv_padding_modes(args, 3)


def _conv_transpose_padding(args: dict[str, Arg], dims: int, runtime: str) -> None:
    """torch's ``output_padding`` makes a transposed convolution's output ``op`` longer at the end of each spatial
    axis: the full transposed result cropped by ``p`` at the start and ``p - op`` at the end, which is MindSpore's
    ``pad_mode='pad'`` with the asymmetric padding ``(p0, p0 - op0, p1, p1 - op1, ...)`` (MindSpore's own
    output_padding only zero-fills on CPU). Without output_padding this is :func:`conv_padding`. An output_padding
    larger than the padding (SAC-AE's decoder: padding 0, output_padding 1) reaches past the full result, where torch
    has the bias alone, and either given by a name may be so when the layer is built: ``runtime`` (the layer of
    ``mindport.runtime.layers`` that takes torch's padding and output_padding and decides when it is built)."""
    output_padding = args.pop("output_padding", None)
    value = output_padding.literal(default=UNKNOWN) if output_padding is not None else 0
    if value == 0 or (isinstance(value, (tuple, list)) and not any(value)):
        conv_padding(args)
        _unpadded_transpose(args, dims)
        return
    mode = args.pop("padding_mode", None)
    _known_mode(mode)
    if mode is not None and mode.literal(default=None) not in ("zeros", None):
        raise Unsupported(f"padding_mode={mode.source}: MindSpore convolutions only zero-pad")
    padding = args.get("padding")
    pad = padding.literal(default=UNKNOWN) if padding is not None else 0
    if value is not UNKNOWN and pad is not UNKNOWN:
        pads = (pad,) * dims if isinstance(pad, int) else tuple(pad)
        extra = (value,) * dims if isinstance(value, int) else tuple(value)
        if len(pads) != dims or len(extra) != dims or not all(isinstance(v, int) for v in pads + extra):
            raise Unsupported(f"padding={padding.source if padding else 0}, output_padding={output_padding.source}: "
                              f"expected ints or {dims}-tuples of ints")
        if dims > 1 and all(o <= p for p, o in zip(pads, extra)):  # (MindSpore's Conv1dTranspose: an int padding)
            args["padding"] = new(repr(tuple(v for p, o in zip(pads, extra) for v in (p, p - o))))
            args["pad_mode"] = new("'pad'")
            return
    if dims == 1:  # already mindport's Conv1dTranspose: MindSpore's padding arguments, and torch's output_padding
        conv_padding(args)
    else:
        args.pop("pad_mode", None)
        args[TARGET] = new(runtime)
    args["output_padding"] = output_padding


def _unpadded_transpose(args: dict[str, Arg], dims: int) -> None:
    """A transposed convolution with no padding: MindSpore's ``pad_mode='valid'`` gives ``in * stride + max(k - stride,
    0)`` per axis (k the dilated kernel), torch's ``(in - 1) * stride + k``: one and the same only where ``k >= stride``
    (``ConvTranspose2d(c, c, 2, stride=3)`` is 15 long in MindSpore's 'valid', 14 in torch, from 5). So 'valid' stays
    where the literals show ``k >= stride`` on every axis, and is ``pad_mode='pad', padding=0`` (torch's length, measured
    for 1-3 spatial dims) elsewhere, a setting given by a name included."""
    mode = args.get("pad_mode")
    if mode is None or mode.source == "'same'":
        return

    def axes(name, default):
        arg = args.get(name)
        value = arg.literal(default=UNKNOWN) if arg is not None else default
        if isinstance(value, int) and not isinstance(value, bool):
            return (value,) * dims
        if isinstance(value, (tuple, list)) and len(value) == dims and all(isinstance(v, int) for v in value):
            return tuple(value)
        return None

    kernel, stride, dilation = axes("kernel_size", None), axes("stride", 1), axes("dilation", 1)
    if mode.source == "'valid'" and None not in (kernel, stride, dilation) and all(
            d * (k - 1) + 1 >= st for k, st, d in zip(kernel, stride, dilation)):
        return
    if mode.source == "'valid'":
        args["pad_mode"] = new("'pad'")
        args["padding"] = new("0")
    else:  # a padding given by a name: an int or a tuple for a transposed convolution, never 'valid'/'same'
        args["pad_mode"] = new("'pad'")


@call_transform("conv_transpose1d_padding")
def conv_transpose1d_padding(args: dict[str, Arg]) -> None:
    """ConvTranspose1d: padding and output_padding (see :func:`_conv_transpose_padding`); the target is already
    mindport's Conv1dTranspose, which takes torch's output_padding."""
    _conv_transpose_padding(args, 1, "mindport.runtime.layers.Conv1dTranspose")


@call_transform("conv_transpose2d_padding")
def conv_transpose2d_padding(args: dict[str, Arg]) -> None:
    """ConvTranspose2d: padding and output_padding (see :func:`_conv_transpose_padding`)."""
    _conv_transpose_padding(args, 2, "mindport.runtime.layers.OutputPaddedConv2dTranspose")


@call_transform("conv_transpose3d_padding")
def conv_transpose3d_padding(args: dict[str, Arg]) -> None:
    """ConvTranspose3d: padding and output_padding (see :func:`_conv_transpose_padding`). MindSpore's
    Conv3dTranspose dilates height and width only (a depth dilation other than 1 raises ValueError when the layer is
    built): a literal one is flagged here, where the line is."""
    dilation = args.get("dilation")
    value = dilation.literal(default=UNKNOWN) if dilation is not None else UNKNOWN
    depth = value[0] if isinstance(value, (tuple, list)) and value else value
    if isinstance(depth, int) and depth != 1:
        raise Unsupported(f"dilation={dilation.source}: MindSpore's Conv3dTranspose dilates height and width only "
                          "(depth dilation 1)")
    _conv_transpose_padding(args, 3, "mindport.runtime.layers.OutputPaddedConv3dTranspose")


def _adaptive_pool1d(args: dict[str, Arg], runtime: str) -> None:
    """AdaptiveAvgPool1d / AdaptiveMaxPool1d and their functions: MindSpore 2.10's refuse a length the output size
    does not divide (ValueError; torch pools uneven bins), and its max pool returns no indices. An output size of 1
    (global pooling: every length divides) with no indices asked for stays MindSpore's own; any other size, one given
    by a name, or ``return_indices`` is ``runtime``, which pools torch's bins (``nn.AdaptiveAvgPool1d(5)`` ->
    ``mp_nn.AdaptiveAvgPool1d(output_size=5)``)."""
    size = args.get("output_size")
    value = size.literal(default=UNKNOWN) if size is not None else UNKNOWN
    indices = args.get("return_indices")
    wants_indices = indices is not None and indices.given and indices.literal(default=True) is not False
    if value in (1, (1,), [1]) and not wants_indices:
        args.pop("return_indices", None)
        return
    args[TARGET] = new(runtime)


@call_transform("adaptive_max_pool3d_layer")
def adaptive_max_pool3d_layer(args: dict[str, Arg]) -> None:
    """nn.AdaptiveMaxPool3d with a literal None in ``output_size`` (keep that input dimension): MindSpore's refuses
    None (TypeError when it runs), so the layer is mindport.runtime.layers.AdaptiveMaxPool3d, which completes the size
    from the input's shape (``nn.AdaptiveMaxPool3d((None, 2, None))`` ->
    ``mp_nn.AdaptiveMaxPool3d(output_size=(None, 2, None))``)."""
    size = args.get("output_size")
    value = size.literal(default=UNKNOWN) if size is not None else UNKNOWN
    if isinstance(value, (tuple, list)) and None in value:
        args[TARGET] = new("mindport.runtime.layers.AdaptiveMaxPool3d")


@call_transform("adaptive_avg_pool1d_layer")
def adaptive_avg_pool1d_layer(args: dict[str, Arg]) -> None:
    """nn.AdaptiveAvgPool1d: see :func:`_adaptive_pool1d`."""
    _adaptive_pool1d(args, "mindport.runtime.layers.AdaptiveAvgPool1d")


@call_transform("adaptive_max_pool1d_layer")
def adaptive_max_pool1d_layer(args: dict[str, Arg]) -> None:
    """nn.AdaptiveMaxPool1d: see :func:`_adaptive_pool1d`."""
    _adaptive_pool1d(args, "mindport.runtime.layers.AdaptiveMaxPool1d")


@call_transform("adaptive_avg_pool1d_function")
def adaptive_avg_pool1d_function(args: dict[str, Arg]) -> None:
    """F.adaptive_avg_pool1d / torch.adaptive_avg_pool1d: see :func:`_adaptive_pool1d`."""
    _adaptive_pool1d(args, "mindport.runtime.nn_functional.adaptive_avg_pool1d")


@call_transform("adaptive_max_pool1d_function")
def adaptive_max_pool1d_function(args: dict[str, Arg]) -> None:
    """F.adaptive_max_pool1d: see :func:`_adaptive_pool1d`."""
    _adaptive_pool1d(args, "mindport.runtime.nn_functional.adaptive_max_pool1d")


def fill_stride_from_kernel(args: dict[str, Arg]) -> None:
    """torch pooling's ``stride=None`` means kernel_size (MindSpore's default is 1); a variable stride may be None
    at run time, so it gets the same fallback there."""
    stride = args.get("stride")
    if stride is None or stride.source == "None":
        args["stride"] = new(args["kernel_size"].source)
    elif not stride.is_literal():
        args["stride"] = new(f"({stride.operand} if {stride.operand} is not None else {args['kernel_size'].operand})")


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


# A call transform whose parameter, given a sequence of several items, converts another way (names each of them):
# transform name -> (parameter, the source it is written with then). A factory or a value class the converter writes
# (migrator/factories.py) receives the parameter only when it is called, so its construction tests it there: a
# ``norm_layer=nn.LayerNorm`` handed on and called with ``(sequence_length, channels)`` (ditschuk/pytorch-tsmixer's
# ``norm_type((sequence_length, input_channels))``) builds OptionalAffineLayerNorm, a single axis MindSpore's own.
SEVERAL_ITEMS = {"layer_norm_axes": ("normalized_shape", "tuple(normalized_shape)")}


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
            _multi_axis(args)
        return
    if re.fullmatch(r"tuple\([A-Za-z_][A-Za-z_0-9.]*\)", shape.source.strip()):
        # a sequence of axes not counted before it runs (the converter's fact: a name read as a sequence)
        _multi_axis(args)
        return
    axes = _display_length(shape.source)
    if axes is not None:  # [n_vertex, channels] (STGCN): the number of axes is known, their sizes are not
        args["normalized_shape"] = new(f"tuple({shape.source})")
        if axes > 1:
            _multi_axis(args)
        return
    # torch takes any integer (numbers.Integral: a numpy integer too) as one axis, and a sequence as several
    args["normalized_shape"] = new(f"(tuple({shape.source}) if isinstance({shape.source}, (tuple, list)) "
                                   f"else ({shape.source},))")


def _display_length(source: str) -> int | None:
    """The number of items of a list or tuple display (``[n, c]``), None for anything else or a starred item."""
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return len(node.elts)
    return None


def _multi_axis(args: dict[str, Arg]) -> None:
    """A normalized_shape of several axes: MindSpore's LayerNorm takes the axis it begins at, and its CPU kernel
    refuses a negative one other than -1, so mindport.runtime.layers.OptionalAffineLayerNorm computes it from the
    input's rank when it runs (``input.ndim - len(normalized_shape)``)."""
    args[TARGET] = new("mindport.runtime.layers.OptionalAffineLayerNorm")


# --------------------------------------------------------------------------------------------- weight transforms

@weight_transform("conv1d_reshape")
def conv1d_reshape(array, target_shape):
    """Conv1d weights are 4-D in MindSpore: (out, in/group, 1, k) for torch's (out, in/group, k)."""
    return array.reshape(target_shape)

# ---------------------------------------------------------------------------------------------- value transforms

@value_transform("layers_explicit_dim")
def layers_explicit_dim(arg: Arg) -> str:
    """Softmax-like ``dim``: torch's ``dim=None`` picks a rank-dependent axis (deprecated); MindSpore has no such
    mode, so only an explicit dim converts."""
    if arg.source == "None":
        raise Unsupported("dim=None (torch's deprecated implicit, rank-dependent dim) has no MindSpore equivalent: "
                          "pass dim explicitly")
    return arg.source


@value_transform("layers_runtime_dim")
def layers_runtime_dim(arg: Arg) -> str:
    """Softmax-like ``dim`` of a mindport runtime target: torch's ``dim=None`` (deprecated, rank-dependent) stays
    None, and the runtime picks the axis from the input's rank at run time, as torch does (``implicit_dim``)."""
    return arg.source


@value_transform("layers_none_false")
def layers_none_false(arg: Arg) -> str:
    """torch ``align_corners=None`` means False (with a warning); MindSpore wants a bool."""
    value = arg.literal(default=UNKNOWN)
    if value is None:
        return "False"
    if value is UNKNOWN:
        return f"bool({arg.source})"
    return arg.source


@value_transform("layers_divisor_override")
def layers_divisor_override(arg: Arg) -> str:
    """Functional avg_pool: torch ``divisor_override=None`` is MindSpore's ``0`` (use the pooling size)."""
    value = arg.literal(default=UNKNOWN)
    if value is None:
        return "0"
    if value is UNKNOWN:
        return f"({arg.operand} or 0)"
    return arg.source


# ----------------------------------------------------------------------------------------------- call transforms

@call_transform("layers_stride_default")
def layers_stride_default(args: dict[str, Arg]) -> None:
    """Functional pooling: torch's ``stride=None`` means kernel_size; MindSpore's ops default stride to 1."""
    fill_stride_from_kernel(args)


@call_transform("layers_fconv_padding")
def layers_fconv_padding(args: dict[str, Arg]) -> None:
    """Functional conv: torch ``padding`` (int, tuple, 'same', 'valid') -> MindSpore ``pad_mode`` + ``padding``
    (ops.conv*d default to pad_mode='valid' and only read ``padding`` with pad_mode='pad')."""
    padding = args.get("padding")
    if padding is None:
        return
    value = padding.literal(default=UNKNOWN)
    if value in ("same", "valid"):
        args.pop("padding")
        args["pad_mode"] = new(repr(value))
    elif value == 0 or (isinstance(value, (tuple, list)) and not any(value)):
        args.pop("padding")
    elif isinstance(value, int) or (isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value)):
        args["pad_mode"] = new("'pad'")
        args["padding"] = new(repr(tuple(value) if isinstance(value, list) else value))
    elif value is UNKNOWN:
        src = padding.operand
        args["pad_mode"] = new(f"({src} if isinstance({src}, str) else 'pad')")
        args["padding"] = new(f"(0 if isinstance({src}, str) else {src})")
    else:
        raise Unsupported(f"padding={padding.source} is not an int, a tuple of ints, 'same' or 'valid'")


@value_transform("layers_int_value")
def layers_int_value(arg: Arg) -> str:
    """An argument MindSpore requires as int where torch takes a float (multi_margin_loss margin)."""
    value = arg.literal(default=UNKNOWN)
    if value is UNKNOWN:
        return f"int({arg.source})"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
        return repr(int(value))
    raise Unsupported(f"{arg.source}: MindSpore 2.10 only accepts an integer value here")


@value_transform("layers_float_value")
def layers_float_value(arg: Arg) -> str:
    """An argument MindSpore requires as float where torch accepts an int (pdist p; ``nn.Dropout2d(p)`` with p=0
    from the caller; ``BatchNorm2d(c, eps=1)``): a literal becomes a float literal, anything else ``float(...)``
    unless it already is one."""
    value = arg.literal(default=UNKNOWN)
    if value is UNKNOWN:
        if arg.source.startswith("float(") and arg.source.endswith(")"):
            return arg.source
        return f"float({arg.source})"
    if isinstance(value, float):
        return arg.source  # a float literal as written (1e-6 stays 1e-6)
    return repr(float(value))


@value_transform("layers_bool_value")
def layers_bool_value(arg: Arg) -> str:
    """A switch MindSpore checks as a bool where torch takes any truthy value (``nn.Linear(a, b, 1)``: Dense's
    has_bias refuses the int 1; ``bias=None`` is torch's "no bias", Dense refuses None): a literal of any other
    kind is written as the bool torch's ``if bias:`` reads."""
    value = arg.literal(default=UNKNOWN)
    if value is not UNKNOWN and not isinstance(value, bool):
        return repr(bool(value))
    return arg.source


@call_transform("layers_pad_value")
def layers_pad_value(args: dict[str, Arg]) -> None:
    """F.pad with a non-constant mode: torch takes value=0 there and ignores it (EnCodec passes its ``value``
    argument whatever the mode); ops.pad refuses any value then ("the padding mode 'reflect' can not set value")."""
    value, mode = args.get("value"), args.get("mode")
    if value is None or mode is None or not value.given:
        return
    how = mode.literal(default=UNKNOWN)
    if how == "constant":
        return
    if how is UNKNOWN:
        args["value"] = new(f"({value.operand} if {mode.operand} == 'constant' else None)")
    elif value.literal(default=UNKNOWN) in (0, None):
        del args["value"]


def _non_negative_amounts(arg: Arg | None) -> bool:
    """Whether a padding argument is a literal of non-negative ints (an int, or a tuple/list of them): the only
    padding MindSpore 2.10's ``ops.pad`` pads right on every call (a negative amount gives wrong values from the
    second call in a process on, see :func:`pad_crop_negative`). A name or an expression may be negative."""
    if arg is None:
        return True
    value = arg.literal(default=UNKNOWN)
    items = value if isinstance(value, (tuple, list)) else (value,)
    return all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in items)


@call_transform("pad_crop_negative")
def pad_crop_negative(args: dict[str, Arg]) -> None:
    """F.pad: torch crops by a negative amount (``F.pad(t, (0, 0, n, -n))``, the token shift of lucidrains' models;
    CIFAR-ZOO's ``F.pad(h, (-1, 1, -1, 1))``); MindSpore 2.10's ``ops.pad`` gives wrong values for a negative amount
    from its second call in a process on (zeros where the kept rows are; PyNative and GRAPH_MODE). A padding that is
    a literal of non-negative ints stays ``ops.pad``; any other (a negative literal, a name, an expression: its sign
    is known when it runs) is ``mindport.runtime.nn_functional.pad``, which crops by slicing and pads the rest with
    ``ops.pad`` (``F.pad(x, (0, 0, n, -n))`` -> ``mp_nn_functional.pad(x, (0, 0, n, -n))``). The converter then
    gives back ``ops.pad`` where the padding is non-negative by construction in the enclosing function
    (TableCallTransform._non_negative_pad, native_facts.NonNegativeFacts: ``pad = (0, 1, 0, 1)`` then
    ``F.pad(x, pad)``), which a mapping transform, seeing only the argument's text, cannot tell."""
    if _non_negative_amounts(args.get("padding")):
        return
    if not _literal_crop(args):
        args[TARGET] = new("mindport.runtime.nn_functional.pad")


def _literal_crop(args: dict[str, Arg]) -> bool:
    """A padding that is a literal of ints, some negative and some positive (``F.pad(t, (1, -1))``, the shift of
    lucidrains' autoregressive wrappers; ``F.pad(gate, (0, 0, 1, -1), value=0.)``): the crop is known from the text,
    so it is written as MindSpore's own slicing and the rest as ``ops.pad`` of the non-negative amounts (``ops.pad(
    t[..., :-1], (1, 0))``), what ``mindport.runtime.nn_functional.pad`` does at run time for the same amounts (a
    negative amount crops that many elements from its side of its axis, pairs counted from the last axis; the other
    modes pad the cropped tensor as torch does). A padding of crops only (no positive amount: torch's result is then
    a narrowing) or of odd length (torch refuses it) is left to the runtime's."""
    padding, input_x = args.get("padding"), args.get("input_x")
    amounts = padding.literal(default=UNKNOWN) if padding is not None else UNKNOWN
    if input_x is None or not isinstance(amounts, (tuple, list)) or len(amounts) % 2 \
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in amounts) \
            or not any(v > 0 for v in amounts):
        return False
    slices = []
    for i in range(0, len(amounts), 2):  # pair i // 2 is axis -(i // 2 + 1)
        start, stop = max(-amounts[i], 0), max(-amounts[i + 1], 0)
        slices.insert(0, f"{start or ''}:{-stop if stop else ''}")
    while slices[0] == ":":  # outer axes left whole are the ellipsis's (an inner one keeps its ``:``)
        slices.pop(0)
    args["input_x"] = new(f"{input_x.operand}[..., {', '.join(slices)}]")
    args["padding"] = new(repr(tuple(max(v, 0) for v in amounts)))
    return True


def _pad_layer(args: dict[str, Arg], runtime: str) -> None:
    """A ConstantPad/ZeroPad layer: MindSpore's Cell pads with ``ops.pad`` (see :func:`pad_crop_negative`); a padding
    that is not a literal of non-negative ints is ``runtime``, the Cell's subclass in ``mindport.runtime.layers``
    that crops a negative amount by slicing (RWKV's ``nn.ZeroPad2d((0, 0, 1, -1))`` -> ``mp_nn.ZeroPad2d(...)``);
    MindSpore's Cell again where the padding is non-negative by construction (TableCallTransform._non_negative_pad)."""
    if not _non_negative_amounts(args.get("padding")):
        args[TARGET] = new(runtime)


@call_transform("constant_pad1d_crop")
def constant_pad1d_crop(args: dict[str, Arg]) -> None:
    """nn.ConstantPad1d / nn.ZeroPad1d: :func:`_pad_layer`."""
    _pad_layer(args, "mindport.runtime.layers.ConstantPad1d")


@call_transform("constant_pad2d_crop")
def constant_pad2d_crop(args: dict[str, Arg]) -> None:
    """nn.ConstantPad2d: :func:`_pad_layer`."""
    _pad_layer(args, "mindport.runtime.layers.ConstantPad2d")


@call_transform("constant_pad3d_crop")
def constant_pad3d_crop(args: dict[str, Arg]) -> None:
    """nn.ConstantPad3d / nn.ZeroPad3d: :func:`_pad_layer`."""
    _pad_layer(args, "mindport.runtime.layers.ConstantPad3d")


@call_transform("zero_pad2d_crop")
def zero_pad2d_crop(args: dict[str, Arg]) -> None:
    """nn.ZeroPad2d: :func:`_pad_layer`."""
    _pad_layer(args, "mindport.runtime.layers.ZeroPad2d")


@call_transform("layers_gather_axis0")
def layers_gather_axis0(args: dict[str, Arg]) -> None:
    """F.embedding(input, weight) as ops.gather(weight, input, 0)."""
    args["axis"] = new("0")


@call_transform("layers_zero_value")
def layers_zero_value(args: dict[str, Arg]) -> None:
    """ZeroPad*d as ConstantPad*d(padding, 0.0)."""
    args["value"] = new("0.0")


@value_transform("layers_explicit_classes")
def layers_explicit_classes(arg: Arg) -> str:
    """one_hot: torch's ``num_classes=-1`` infers the depth from the data; ops.one_hot needs it."""
    if arg.literal(default=UNKNOWN) == -1:
        raise Unsupported("num_classes=-1 (inferred from the data) has no MindSpore equivalent: pass num_classes")
    return arg.source


@call_transform("embedding_torch_init")
def embedding_torch_init(args: dict[str, Arg]) -> None:
    """torch initialises Embedding rows from N(0, 1); MindSpore's default 'normal' table has std 0.01. Spell out
    torch's init so a converted model trained from scratch starts like the original."""
    if "embedding_table" not in args:
        args["embedding_table"] = new("mindspore.common.initializer.Normal(sigma=1.0)")
    # torch counts a negative padding_idx from the end (padding_idx=-1 is the last row); MindSpore's Embedding
    # refuses it: a literal one becomes its row, num_embeddings + padding_idx (a non-literal one is passed as written)
    pad, size = args.get("padding_idx"), args.get("vocab_size")
    index = pad.literal(default=UNKNOWN) if pad is not None else UNKNOWN
    if isinstance(index, int) and not isinstance(index, bool) and index < 0 and size is not None:
        rows = size.literal(default=UNKNOWN)
        total = size.source if size.source.replace(".", "").replace("_", "").isalnum() else f"({size.source})"
        args["padding_idx"] = new(str(rows + index) if isinstance(rows, int) else f"{total} - {-index}")


def _lazy(transform):
    """The eager layer's call transform for its ``nn.Lazy*`` twin (mindport.runtime.layers.Lazy*, which builds the
    layer at the first call): the same arguments, but the target stays the lazy Cell, which picks the layer the eager
    transform would switch to from the arguments it is given (``output_padding`` present: the output-padded one)."""

    def lazy(args: dict[str, Arg]) -> None:
        transform(args)
        args.pop(TARGET, None)

    lazy.__doc__ = f"{transform.__name__} of the lazy layer (see :func:`_lazy`)."
    return lazy


call_transform("lazy_conv_transpose2d_padding")(_lazy(conv_transpose2d_padding))
call_transform("lazy_conv_transpose3d_padding")(_lazy(conv_transpose3d_padding))


# --------------------------------------------------------------------------------------------- a layer's dtype

# float32 (or None) as written, the dtype spelled torch's way or already MindSpore's (``ms.float32``)
_FLOAT32 = re.compile(r"None|(\w+\.)+(float32|float)")
_OTHER_DTYPE = re.compile(r"(\w+\.)+(float64|double|float16|half|bfloat16)")


@call_transform("layer_dtype")
def layer_dtype(args: dict[str, Arg]) -> None:
    """A layer built in another dtype (``nn.Linear(n, h, dtype=torch.float64)``): MindSpore's layer takes ``dtype``
    too and computes in it on the CPU (Dense, LayerNorm, GroupNorm, BiDense; the others are
    :func:`layer_dtype_float32`'s), so a dtype written as torch's is kept (the dtype itself is converted as
    everywhere: ``ms.float64``); float32 and None are the default, not written (the
    layer refuses None: "init, dtype and shape must have values at the same time"); a value known at run time
    (``dtype=dtype``, a factory's argument that is often None) is ``dtype or mindspore.float32``. Dropped before, the
    port's layer was float32 beside torch's float64, silently."""
    dtype = args.get("dtype")
    if dtype is None:
        return
    source = dtype.source.strip()
    if _FLOAT32.fullmatch(source):
        args.pop("dtype")
    elif not _OTHER_DTYPE.fullmatch(source):
        args["dtype"] = new(f"{dtype.operand} or mindspore.float32")


@call_transform("layer_dtype_float32")
def layer_dtype_float32(args: dict[str, Arg]) -> None:
    """A layer whose MindSpore form is built in float32 only (no ``dtype``: LSTM, PReLU, the runtime layers): float32
    and None are what it is; a dtype written as another of torch's (``dtype=torch.float64``) cannot be had and is
    flagged (dropping it changed the port's numbers silently); a value known at run time is left out, as torch's
    factory arguments mostly hold None."""
    dtype = args.pop("dtype", None)
    if dtype is not None and _OTHER_DTYPE.fullmatch(dtype.source.strip()):
        raise Unsupported(f"dtype={dtype.source}: MindSpore's layer is built in float32 only (build it in float32 "
                          "and cast its parameters, or keep the layer float32)")
