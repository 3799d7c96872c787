"""Named transforms for the functions mapping entries (see mindport.mappings.transforms for the three registries)."""
from __future__ import annotations

import ast

from mindport.mappings.transforms.base import (
    TARGET,
    UNKNOWN,
    Arg,
    Unsupported,
    call_transform,
    new,
    value_code,
    value_transform,
)
from mindport.mappings.transforms.layers import _list_display, _list_expression_as_tuple

import libcst as cst


# ---------------------------------------------------------------------------------------------- value transforms

@value_transform("functions_int_tensor")
def functions_int_tensor(arg: Arg) -> str:
    """An integer that MindSpore wants as a Tensor (ops.polygamma's n, the window functions' window_length)."""
    return f"mindspore.Tensor({arg.source})"


@value_transform("functions_negate")
def functions_negate(arg: Arg) -> str:
    """argmin(x) == argmax(-x) (same first-occurrence tie rule): ops.argmin returns int32, ops.argmax int64."""
    return f"-({arg.source})"


@value_transform("functions_meshgrid_indexing")
def functions_meshgrid_indexing(arg: Arg) -> str:
    """torch's indexing=None means 'ij' (MindSpore defaults to 'xy')."""
    return "'ij'" if arg.source == "None" else arg.source


@value_transform("functions_int_base")
def functions_int_base(arg: Arg) -> str:
    """ops.logspace takes an int base; torch a float (default 10.0)."""
    value = arg.literal(default=UNKNOWN)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if float(value).is_integer():
            return repr(int(value))
        raise Unsupported(f"base={arg.source}: ops.logspace only takes an integer base")
    return f"int({arg.source})"


@value_transform("functions_float_literal")
def functions_float_literal(arg: Arg) -> str:
    """An argument torch takes as a tensor or any number, MindSpore as a tensor or a float (``torch.lerp(a, b, 1)``:
    Lerp refuses weight=int): an int literal is written as the float literal (``1`` -> ``1.0``). A name passes as
    written: it may hold a tensor, which ``float(...)`` would break; an int there fails loudly on MindSpore."""
    value = arg.literal(default=UNKNOWN)
    if isinstance(value, int) and not isinstance(value, bool):
        return repr(float(value))
    return arg.source


_HOST_COPIES = (".numpy()", ".asnumpy()", ".tolist()")
_HOST_STEPS = (".cpu()", ".detach()", ".data", ".clone()", ".copy()") + _HOST_COPIES


@value_transform("functions_lengths_tensor")
def functions_lengths_tensor(arg: Arg) -> str:
    """torch.nn.utils.rnn's ``lengths`` written as a host copy of a tensor (NCRF++'s
    ``pack_padded_sequence(x, lengths.cpu().numpy(), True)``): the tensor itself, which torch takes with the same
    meaning. In a graph the copy (``.asnumpy()``, ``.tolist()``) is Python run by MindSpore's JIT Fallback: the whole
    pack call then ran as Python and the recurrent layer met a Python object ("'Tuple' object has no attribute
    'ndim'"); a tensor compiles. Anything else is kept as written."""
    source, copied = arg.source.strip(), False
    while True:
        step = next((s for s in _HOST_STEPS if source.endswith(s) and len(source) > len(s)), None)
        if step is None:
            break
        copied = copied or step in _HOST_COPIES
        source = source[:-len(step)]
    if not copied:
        return arg.source
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return arg.source
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and isinstance(node.func, (ast.Attribute, ast.Name)) \
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "stop_gradient":
        source = ast.get_source_segment(source, node.args[0]) or source  # .detach() converted before this runs
    return source


# ----------------------------------------------------------------------------------------------- call transforms

def _dtype_missing(args: dict[str, Arg]) -> bool:
    dtype = args.get("dtype")
    return dtype is None or dtype.source == "None"


@call_transform("functions_full_dtype")
def functions_full_dtype(args: dict[str, Arg]) -> None:
    """torch.full infers the dtype from fill_value (float -> float32, int -> int64, bool -> bool); ops.full gives
    int64 for a float fill (2.5 becomes 2): the dtype is always written out."""
    if not _dtype_missing(args):
        return
    fill = args["fill_value"]
    value = fill.literal(default=UNKNOWN)
    if isinstance(value, bool):
        args["dtype"] = new("mindspore.bool_")
    elif isinstance(value, int):
        args["dtype"] = new("mindspore.int64")
    elif isinstance(value, float):
        args["dtype"] = new("mindspore.float32")
    else:
        src = fill.operand
        args["dtype"] = new(f"(mindspore.bool_ if isinstance({src}, bool) else mindspore.int64 if isinstance({src}, int) "
                            f"else mindspore.float32 if isinstance({src}, float) else None)")


@call_transform("functions_float32_default")
def functions_float32_default(args: dict[str, Arg]) -> None:
    """Window functions: torch returns the default dtype (float32), MindSpore float64 unless dtype is given."""
    if _dtype_missing(args):
        args["dtype"] = new("mindspore.float32")


def _holds_complex(value, depth: int = 0) -> bool:
    if isinstance(value, complex):
        return True
    if isinstance(value, (list, tuple)) and depth < 64:
        return any(_holds_complex(v, depth + 1) for v in value)
    return False


@call_transform("functions_complex_literal")
def functions_complex_literal(args: dict[str, Arg]) -> None:
    """torch.tensor of Python complex numbers is complex64 (the default float dtype's complex); ms.Tensor makes
    complex128 of them. A literal holding a complex number gets dtype complex64 written out."""
    data = args.get("input_data")
    if data is not None and _dtype_missing(args) and _holds_complex(data.literal(default=UNKNOWN)):
        args["dtype"] = new("mindspore.complex64")


@call_transform("functions_tensor_value")
def functions_tensor_value(args: dict[str, Arg]) -> None:
    """torch.as_tensor of data that is not a literal (a name, an attribute, a call's result) may be given a tensor,
    which torch gives back as it is (cast to ``dtype`` if given): mindport.runtime.tensor.as_tensor does the same.
    ``mindspore.Tensor(t)`` of a tensor is run by the Python interpreter in a static graph (GRAPH_MODE), so its
    result has no known dtype or rank, and the next op that reads them failed to compile (a DDPM UNet's
    ``torch.as_tensor(t).long()``). A literal (``torch.as_tensor([1, 2])``) stays ``mindspore.Tensor``."""
    data = args.get("input_data")
    if data is not None and data.given and data.literal(default=UNKNOWN) is UNKNOWN:
        args[TARGET] = new("mindport.runtime.tensor.as_tensor")


@call_transform("functions_tensor_data")
def functions_tensor_data(args: dict[str, Arg]) -> None:
    """torch.tensor of data that is not a literal (a name, a list display of names, a comprehension) may hold
    tensors, which torch reads as scalars when they hold one element: ``torch.tensor([t1, t2])`` of shape-(1,)
    tensors is shape (2,), where ``mindspore.Tensor`` stacks them into (2, 1) (a REINFORCE-with-GAE script's returns
    broadcast against its values, loss 16950 for torch's 892). mindport.runtime.tensor.tensor reads the data as
    torch does; a literal (``torch.tensor([1.0, 2.0])``) stays ``mindspore.Tensor``."""
    data = args.get("input_data")
    if data is not None and data.given and data.literal(default=UNKNOWN) is UNKNOWN and not _array_call(data.source):
        args[TARGET] = new("mindport.runtime.tensor.tensor")


_ARRAY_ROOTS = frozenset({"np", "numpy", "math", "random", "pd", "pandas"})
_ARRAY_METHODS = frozenset({"numpy", "asnumpy", "tolist", "item", "astype", "to_numpy", "values"})


def _array_call(source: str) -> bool:
    """Data that cannot hold a tensor: a call of numpy (pandas, math, random) or of a method giving an array or
    Python values (``x.numpy()``, ``.tolist()``, ``.astype(...)``)."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _ARRAY_METHODS:
        return True
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in _ARRAY_ROOTS


@call_transform("functions_int64_dtype")
def functions_int64_dtype(args: dict[str, Arg]) -> None:
    """ops.count_nonzero returns int32 unless told; torch returns int64."""
    args["dtype"] = new("mindspore.int64")


@call_transform("functions_out_int32_only")
def functions_out_int32_only(args: dict[str, Arg]) -> None:
    """ops.bucketize always returns int32: only torch's out_int32=True has an equivalent."""
    flag = args.pop("out_int32", None)
    if flag is None or flag.literal(default=UNKNOWN) not in (True, UNKNOWN):
        raise Unsupported("ops.bucketize returns int32 indices (torch int64 unless out_int32=True): "
                          "pass out_int32=True, or cast the result with .astype(mindspore.int64)")


@call_transform("functions_normal_shape")
def functions_normal_shape(args: dict[str, Arg]) -> None:
    """torch.normal(mean, std) with tensors -> ops.normal(shape, mean, stddev): shape of the broadcast pair; the
    ``normal(mean)`` form (std 1.0, torch's default) has mean's shape and writes stddev=1.0; the float form
    ``normal(mean, std, size)`` takes size as the shape."""
    mean, std = args["mean"], args["stddev"]
    size = args.pop("size", None)
    if size is not None and size.given:  # normal(mean: float, std: float, size)
        args["shape"] = new(size.source)
        return
    if not std.given:
        args["stddev"] = new("1.0")
        args["shape"] = new(f"mindspore.ops.shape({mean.source})")
        return
    args["shape"] = new(f"mindspore.ops.shape(({mean.source}) + ({std.source}))")


@value_transform("functions_none_to_empty")
def functions_none_to_empty(arg: Arg) -> str:
    """ops.count_nonzero counts over all axes with axis=() (torch: dim=None)."""
    return "()" if arg.source == "None" else arg.source


def _varargs_parts(arg: Arg) -> list[str]:
    """The source of each argument gathered by a ``*name`` parameter, a starred one (``*x.shape[2:]``) with its star."""
    return [("*" if a.star == "*" else "") + value_code(a) for a in (arg.node or [])]


def _int_list(parts: list[str]) -> str:
    """One int-list argument from its parts: a single plain part as written (an int, a tuple, a torch.Size), a list
    display as a tuple display (``x.repeat([B, S, 1])``, point-e: MindSpore's ``tile`` refuses a list, "Failed calling
    tile with tile(List<int, int, int>)"), else a tuple display, which unpacks starred parts as Python does
    (``(n, 1, *x.shape[2:])``); a list built by an expression (``x.repeat([1] * n)``) as a tuple the same way."""
    if len(parts) == 1 and not parts[0].startswith("*"):
        elements = _list_display(parts[0])
        if elements is None:
            return _list_expression_as_tuple(parts[0])
        return _int_list(elements) if elements else "()"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


@call_transform("meshgrid_varargs")
def meshgrid_varargs(args: dict[str, Arg]) -> None:
    """torch.meshgrid takes its tensors as varargs or as one list/tuple; ``ops.meshgrid`` only as varargs, so the
    table's target is the runtime function, which unpacks a list. Where the call shows its tensors (two or more
    arguments, none starred: ``torch.meshgrid(pos, pos, indexing='ij')``; or one list/tuple display, none of its
    elements starred: ``torch.meshgrid([h, w])``, written out as varargs) it is ``ops.meshgrid`` itself, which
    gives torch's grids for 0-d and 1-d tensors of any dtype, PyNative and GRAPH_MODE (tests/converter/
    test_meshgrid_native.py); one name (``torch.meshgrid(*coords)``, ``torch.meshgrid(coords)``: a tensor or a list,
    known when it runs) keeps the runtime function."""
    for name, arg in list(args.items()):
        if arg.source != "<varargs>":
            continue
        parts = list(arg.node or [])
        if len(parts) == 1 and not parts[0].star and isinstance(parts[0].value, (cst.List, cst.Tuple)):
            elements = parts[0].value.elements
            if not elements or any(isinstance(e, cst.StarredElement) for e in elements):
                return
            parts = [cst.Arg(value=e.value) for e in elements]
            args[name] = Arg(arg.source, arg.given, parts, arg.cst_arg)
        elif len(parts) < 2 or any(p.star for p in parts):
            return
        args[TARGET] = new("mindspore.ops.meshgrid")
        return


@call_transform("functions_size_varargs")
def functions_size_varargs(args: dict[str, Arg]) -> None:
    """torch.zeros(2, 3) / torch.zeros((2, 3)) / torch.zeros(*shape) -> ops.zeros((2, 3)): the varargs size becomes
    one shape argument."""
    for name, arg in list(args.items()):
        if arg.source != "<varargs>":
            continue
        parts = _varargs_parts(arg)
        if not parts:
            raise Unsupported("no size given")
        args[name] = new(_int_list(parts))


def _zero_dim_fill(args: dict[str, Arg], value: str) -> None:
    """An empty literal shape (``torch.ones([])``, CLIP's logit scale): MindSpore 2.10's Ones/Zeros CPU kernels
    refuse a 0-d shape, so the 0-d tensor is made by ``mindport.runtime.math.scalar_tensor``."""
    name = "shape" if "shape" in args else "size"
    shape = args.get(name)
    if shape is None or shape.literal(default=UNKNOWN) not in ((), []):
        return
    rest = {k: v for k, v in args.items() if k != name}
    args.clear()
    args.update({"s": new(value), **rest, TARGET: new("mindport.runtime.math.scalar_tensor")})


@call_transform("functions_ones_0d")
def functions_ones_0d(args: dict[str, Arg]) -> None:
    _zero_dim_fill(args, "1")


@call_transform("functions_zeros_0d")
def functions_zeros_0d(args: dict[str, Arg]) -> None:
    _zero_dim_fill(args, "0")


@call_transform("int_list_varargs")
def int_list_varargs(args: dict[str, Arg]) -> None:
    """torch takes an int list as one argument or spread out (``x.new_zeros(2, 3)``, ``x.flip(0, 1)``,
    ``x.new_zeros(*x.shape)``, ``x.new_zeros(n, 1, *x.shape[2:])``) or by keyword (``size=(2, 3)``). The entry's
    signature says ``(*size_rest, size=None, ...)``: every positional argument, starred ones too, lands in
    ``size_rest`` and the keyword in ``size``; here the positional parts become the one list argument."""
    for rest_name in [name for name in args if name.endswith("_rest")]:
        rest = args.pop(rest_name)
        name = rest_name[: -len("_rest")]
        parts = _varargs_parts(rest) if rest.source == "<varargs>" else []
        if parts and args.get(name) is not None and args[name].given:
            raise Unsupported(f"{name} given both positionally and by keyword: torch rejects this call")
        if parts:
            args[name] = new(_int_list(parts))


@call_transform("int_dims_tuple")
def int_dims_tuple(args: dict[str, Arg]) -> None:
    """``dims`` given as one int (``x.flip(0)``, ``x.flip(d)``) becomes a 1-tuple: MindSpore's flip refuses an int
    (:func:`_one_int_as_tuple`)."""
    _one_int_as_tuple(args, "dims")


@call_transform("shape_int_tuple")
def shape_int_tuple(args: dict[str, Arg]) -> None:
    """``x.broadcast_to(n)`` with one int (simple-diffusion's ``timesteps.broadcast_to(sample.shape[0])``): torch
    takes it as a 1-element size, MindSpore's broadcast_to refuses an int (:func:`_one_int_as_tuple`)."""
    _one_int_as_tuple(args, "shape")


def _one_int_as_tuple(args: dict[str, Arg], name: str) -> None:
    """An int list argument given as one value MindSpore's target refuses when it is an int: an int literal or an
    expression that is an int by its form (``x.shape[0]``, ``x.size(1)``, ``len(...)``) becomes a 1-tuple
    (``(x.shape[0],)``); a plain name or attribute that may hold an int or a sequence is decided when it runs
    (``(n,) if isinstance(n, int) else n``); a tuple, a list display or a shape (``x.shape``, ``x.size()``) stays."""
    arg = args.get(name)
    if arg is None or not arg.given:
        return
    value = arg.literal(default=UNKNOWN)
    if isinstance(value, int) and not isinstance(value, bool):
        args[name] = new(f"({arg.source},)")
        return
    if value is not UNKNOWN:
        return
    try:
        node = ast.parse(arg.source, mode="eval").body
    except SyntaxError:
        return
    if _int_by_form(node):
        args[name] = new(f"({arg.source},)")
    elif isinstance(node, (ast.Name, ast.Attribute)) and not (isinstance(node, ast.Attribute) and node.attr == "shape"):
        args[name] = new(f"(({arg.source},) if isinstance({arg.source}, int) else {arg.source})")


def _int_by_form(node: ast.expr) -> bool:
    """``x.shape[0]``, ``x.size(1)``, ``x.dim()``, ``x.numel()``, ``len(...)``, ``int(...)``: an int whatever x is."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        return not isinstance(node.slice, ast.Slice)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("len", "int"):
            return True
        if isinstance(func, ast.Attribute) and func.attr == "size" and len(node.args) == 1:
            return True
        if isinstance(func, ast.Attribute) and func.attr in ("dim", "numel", "ndimension", "nelement") and not node.args:
            return True
    return False


@call_transform("unbiased_correction")
def unbiased_correction(args: dict[str, Arg]) -> None:
    """var/std and their _mean forms: torch takes the legacy ``unbiased`` flag (``x.var(1, False, True)``,
    ``unbiased=False``) or ``correction`` (keyword-only, default 1; ``x.var(True)`` is the flag too). MindSpore has
    one integer, ``ddof`` (``correction`` where the target keeps torch's names); its default is 0, so it is always
    written: the correction if given, else 1 or 0 from the flag. The signature says ``correction=None`` (torch's
    "not given") and ``emit``s it."""
    dim_name = "axis" if "axis" in args else "dim"
    name = "ddof" if "ddof" in args else "correction"
    unbiased = args.pop("unbiased")
    dim = args.get(dim_name)
    if dim is not None and dim.given and isinstance(dim.literal(default=UNKNOWN), bool):
        if unbiased.given:
            raise Unsupported(f"{dim_name}={dim.source} given with unbiased: torch rejects this call")
        unbiased = dim  # x.var(False): the bool overload, (unbiased)
        args[dim_name] = Arg("None", False)
    correction = args[name]
    if correction.source != "None":
        if unbiased.given:
            raise Unsupported("both unbiased and correction given: torch rejects this call")
        return
    flag = unbiased.literal(default=UNKNOWN)
    if flag is UNKNOWN:
        args[name] = new(f"int({unbiased.source})")
    else:
        args[name] = new("1" if flag else "0")


@call_transform("legacy_reduction")
def legacy_reduction(args: dict[str, Arg]) -> None:
    """The losses' deprecated ``size_average`` and ``reduce`` flags (``nn.MSELoss(size_average=False)``,
    ``F.nll_loss(x, t, reduce=False)``): when either is given (not None), torch ignores ``reduction`` and takes
    'mean' when both are true (None counts as true), 'sum' when only ``reduce`` is, 'none' when ``reduce`` is false.
    Literal flags become that ``reduction``; a flag known only at run time becomes the same choice written as an
    expression over it. ``reduction='elementwise_mean'``, torch's name for 'mean' before 1.0 (still accepted, with a
    warning), becomes 'mean' (MindSpore raises ValueError on it)."""
    reduction = args.get("reduction")
    if reduction is not None and reduction.given and reduction.literal(default=None) == "elementwise_mean":
        args["reduction"] = new("'mean'")
    size_average, reduce = args.pop("size_average"), args.pop("reduce")
    flags = [arg for arg in (size_average, reduce) if arg.given and arg.source != "None"]
    if not flags:
        return
    values = [arg.literal(default=UNKNOWN) for arg in (size_average, reduce)]
    if UNKNOWN not in values:
        if all(value is None for value in values):
            return
        average, keep = (True if value is None else bool(value) for value in values)
        args["reduction"] = new(repr("mean" if average and keep else "sum" if keep else "none"))
        return
    average, keep = (f"(({arg.source}) is None or bool({arg.source}))" for arg in (size_average, reduce))
    if not (size_average.given and reduce.given):  # only one flag written: the other is None
        average = average if size_average.given else "True"
        keep = keep if reduce.given else "True"
    given = " or ".join(f"({arg.source}) is not None" for arg in flags)
    args["reduction"] = new(f"(('mean' if {average} else 'sum') if {keep} else 'none') if {given} "
                            f"else {args['reduction'].source}")


@call_transform("svd_full_matrices_written")
def svd_full_matrices_written(args: dict[str, Arg]) -> None:
    """``torch.linalg.svd(A, full_matrices=True)`` written out asks for the columns of U (rows of Vh) past
    min(m, n): any orthonormal basis of the rest of the space (torch's documentation says so); MindSpore's ops.svd
    gives another basis than torch's LAPACK. Left at its default (most calls use U[..., :k] or a square A), the call
    converts."""
    full = args.get("full_matrices")
    if full is not None and full.given and full.literal(default=None) is True:
        raise Unsupported("full_matrices=True: the columns of U (rows of Vh) past min(m, n) are an arbitrary "
                          "orthonormal basis, and MindSpore's ops.svd picks another one than torch")


@call_transform("split_overload_names")
def split_overload_names(args: dict[str, Arg]) -> None:
    """tensor_split/hsplit/vsplit/dsplit: torch's overloads name the second argument ``sections`` (an int),
    ``indices`` (a list) or ``tensor_indices_or_sections``; MindSpore has one, ``indices_or_sections`` (an int is
    sections, a list indices, as in torch)."""
    chosen = args.get("indices_or_sections")
    for name in ("indices", "sections", "tensor_indices_or_sections"):
        arg = args.pop(name, None)
        if arg is None or not arg.given:
            continue
        if chosen is not None and chosen.given:
            raise Unsupported(f"{name} given with another form of indices_or_sections: torch rejects this call")
        chosen = args["indices_or_sections"] = new(arg.source)
    if chosen is None or not chosen.given:
        raise Unsupported("no indices_or_sections (nor sections/indices): torch rejects this call")


@call_transform("where_condition_only")
def where_condition_only(args: dict[str, Arg]) -> None:
    """torch.where's other overload, ``torch.where(condition)`` (``data[torch.where(labels == 0)[0], 0]``): the
    indices where condition holds, one tensor per axis, as ``torch.nonzero(condition, as_tuple=True)``. Only one of
    input/other given: torch rejects the call."""
    given = [name for name in ("input", "other") if args.get(name) is not None and args[name].source != "None"]
    if len(given) == 1:
        raise Unsupported(f"torch.where with {given[0]} but not the other value: torch rejects this call")
    if not given:
        args.pop("input", None)
        args.pop("other", None)
        args.update({"as_tuple": new("True"), TARGET: new("mindport.runtime.math.nonzero")})


@call_transform("randint_high_only")
def randint_high_only(args: dict[str, Arg]) -> None:
    """torch.randint's other overload, ``randint(high, size)`` (Informer's ProbAttention: ``torch.randint(L_K,
    (L_Q, sample_k))``): bound to the full signature it reads as low=high, high=size. With no size (or no high) the
    arguments move up one place and low is 0, as in torch."""
    low, high, size = args.get("low"), args.get("high"), args.get("size")
    if size is not None and size.source == "None" and high is not None and high.source != "None":
        args["size"], args["high"], args["low"] = high, low, new("0")
    elif high is not None and high.source == "None" and low is not None:
        args["high"], args["low"] = low, new("0")


# calls whose result is a bool tensor, by the name they are called under (torch's, or MindSpore's after conversion)
_BOOL_CALLS = frozenset({"bool", "bool_", "isnan", "isinf", "isfinite", "isneginf", "isposinf", "isreal", "isclose", "signbit",
                         "logical_and", "logical_or", "logical_not", "logical_xor", "eq", "ne", "lt", "gt", "le", "ge",
                         "equal", "not_equal", "less", "greater", "less_equal", "greater_equal", "isin", "any", "all"})


def _bool_by_construction(node) -> bool:
    """A condition whose dtype is bool whatever its operands hold: a comparison, ``~``/``not`` of one, ``&``/``|``/
    ``^`` of two, a call that makes a mask (``isnan``, ``logical_and``, ``.bool()``), a bool literal."""
    import libcst as cst

    if isinstance(node, cst.Comparison) or (isinstance(node, cst.Name) and node.value in ("True", "False")):
        return True
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Not) or (isinstance(node.operator, cst.BitInvert)
                                                      and _bool_by_construction(node.expression))
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        return _bool_by_construction(node.left) and _bool_by_construction(node.right)
    if isinstance(node, cst.Call):
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name in _BOOL_CALLS:
            return True
        if name == "astype" and node.args and getattr(node.args[0].value, "attr", None) is not None:
            return node.args[0].value.attr.value == "bool_"
    return False


@value_transform("functions_bool_condition")
def functions_bool_condition(arg: Arg) -> str:
    """torch.where takes any integer condition as a mask (uint8, deprecated but working; nonzero is True); MindSpore's
    Select refuses a condition that is not bool ("Unsupported data type ... UInt8"). A condition that is not bool by
    construction (a comparison, a mask-making call) is cast: ``mask.astype(mindspore.bool_)``, which changes nothing
    on a bool tensor."""
    import libcst as cst

    node = arg.node
    if node is None:
        try:
            node = cst.parse_expression(arg.source)
        except cst.ParserSyntaxError:
            return arg.source
    if _bool_by_construction(node):
        return arg.source
    source = arg.source if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else f"({arg.source})"
    return f"{source}.astype(mindspore.bool_)"


@call_transform("add_alpha")
def add_alpha(args: dict[str, Arg]) -> None:
    """``torch.add(input, other, alpha=k)`` is ``input + k * other``; ``ops.add`` has no ``alpha``, so ``other``
    becomes ``other * k`` (a literal 1, or no alpha, leaves the call as it is). The alpha may be any expression
    (EDM2's ``torch.add(eps, norm, alpha=np.sqrt(norm.numel() / x.numel()))``), and ``input`` a Python number."""
    alpha = args.pop("alpha", None)
    if alpha is None or not alpha.given or alpha.literal(default=UNKNOWN) == 1:
        return
    other = args["other"]
    args["other"] = new(f"{other.operand} * {alpha.operand}")


@call_transform("argmax_native_dims")
def argmax_native_dims(args: dict[str, Arg]) -> None:
    """torch.argmax / Tensor.argmax, whose entry is mindport.runtime.math.argmax: torch keeps every dimension as 1 where
    ``dim`` is None and ``keepdim`` true (shape (1, 1) for a matrix), ops.argmax gives a 0-d index, and the runtime
    reshapes it. Where ``keepdim`` is a literal false value (or not given) or ``dim`` a literal int, that case cannot
    arise and the call is MindSpore's own ``ops.argmax``, the call the runtime makes (nanochat's and x-transformers'
    ``logits.argmax(dim=-1, keepdim=True)`` -> ``ops.argmax(logits, dim=-1, keepdim=True)``). The entry's target stays
    the runtime's, so a receiver of unknown kind (a NumPy array?) keeps its own ``argmax`` as written
    (TableCallTransform._strict_name)."""
    keepdim, dim = args.get("keepdim"), args.get("dim")
    keep = keepdim.literal(default=UNKNOWN) if keepdim is not None and keepdim.given else False
    axis = dim.literal(default=UNKNOWN) if dim is not None and dim.given else None
    if (keep is not UNKNOWN and not keep) or (isinstance(axis, int) and not isinstance(axis, bool)):
        args[TARGET] = new("mindspore.ops.argmax")


@call_transform("linspace_native_float32")
def linspace_native_float32(args: dict[str, Arg]) -> None:
    """torch.linspace, whose entry is mindport.runtime.math.linspace (ops.linspace has no dtype argument: the runtime
    casts its float32 result, and computes float64 itself). With no ``dtype`` (or ``dtype=None``) torch's result is
    float32, ops.linspace's own, and the runtime calls ``ops.linspace(start, end, steps)``: that call is written
    (DINO's ``torch.linspace(0, drop_path_rate, depth)``)."""
    dtype = args.get("dtype")
    if dtype is None or not dtype.given or dtype.source.strip() == "None":
        args.pop("dtype", None)
        args[TARGET] = new("mindspore.ops.linspace")
