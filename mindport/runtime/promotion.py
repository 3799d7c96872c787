"""Names only (no MindSpore import): the floating-only functions torch computes in float32 for an integer or bool
input, which :mod:`mindport.runtime.math` wraps as ``int_to_float(ops.X)``. The converter reads the same list: a
call of one of them on a tensor that is floating point by construction (``mindport/migrator/native_facts.py``) is
MindSpore's own ``ops.X``."""

INT_TO_FLOAT = ("acos", "arccos", "acosh", "arccosh", "asin", "arcsin", "asinh", "arcsinh", "atan", "arctan", "atanh",
                "arctanh", "cos", "cosh", "sin", "sinh", "tan", "tanh", "exp", "exp2", "log", "log2", "log10", "sqrt",
                "rsqrt", "sigmoid", "erf", "erfc", "digamma", "lgamma", "i0", "sinc", "logit", "deg2rad", "rad2deg",
                "reciprocal")

# of those, the ones whose MindSpore float32 kernel is not torch's precision: mindport.runtime.math computes them its
# own way even on a floating input (tanh: MindSpore 2.10's kernel is off by 1e-4 for 3 < |x| < 8), so the converter
# never takes ops.X for them
OWN_PRECISION = ("tanh",)

# element-wise functions of several tensors whose MindSpore 2.10 kernel takes one dtype for all of them (or floating
# ones only), where torch gives their common type (``ids.addcmul(a, b)`` with an int64 receiver and float a, b is
# float32), and the scatters that write ``src`` into the receiver's dtype: mindport.runtime.math.<name> computes them
# through the one promotion rule (``promoted_operands``, torch's result_type); the converter keeps MindSpore's own
# ``ops.<name>`` where the receiver and every tensor operand are floating point by construction (one float dtype: a
# float width mixed against another is refused by MindSpore loudly, never a silent value).
PROMOTED = ("addcmul", "addcdiv", "ger", "igamma", "igammac", "logaddexp", "logaddexp2", "select_scatter",
            "slice_scatter")

# functions whose MindSpore 2.10 CPU kernel refuses an integer or bool tensor that torch computes on in its own dtype
# (``ids.isinf()`` is all False, ``lengths.floor()`` the same integers, ``nan_to_num`` of ints a copy):
# mindport.runtime.math.<name>; the converter keeps MindSpore's own ``ops.<name>`` where the receiver is floating
# point by construction
INT_RECEIVERS = ("isinf", "isposinf", "isneginf", "nan_to_num", "ceil", "floor")

# torch functions that join a sequence of tensors into one and give it the dtypes' common type (torch's type
# promotion: ``torch.column_stack([float32, int64])`` is float32); MindSpore 2.10's Concat and Stack refuse mixed
# dtypes in PyNative (Stack in GRAPH_MODE too). Enumerated from torch itself: the aten schemas whose first argument is
# a ``Tensor[]`` and whose one result is a Tensor, public as ``torch.<name>`` (tests/runtime/test_join_promotion.py
# re-enumerates them from the installed torch and fails on one this data does not place). The tensors are the first
# argument (``tensors``) of every JOINS entry; VARARG_JOINS take them as ``*tensors``.
JOINS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
         "torch.dstack", "torch.column_stack", "torch.row_stack")
VARARG_JOINS = ("torch.block_diag",)
# the other members of that enumeration: torch refuses mixed dtypes there too (nothing to promote), or they are not
# public torch functions the tables map as torch.<name> (pad_sequence: torch.nn.utils.rnn's, whose runtime function
# promotes through mindport.runtime.tensor.promoted)
SAME_DTYPE_JOINS = ("torch.cartesian_prod", "torch.chain_matmul", "torch.linalg.multi_dot")
OTHER_JOINS = ("flatten_dense_tensors", "linalg_multi_dot", "pad_sequence")

# torch's type promotion of two dtypes (``torch.promote_types``), as data: a higher category wins (bool < integer <
# floating < complex), within one the later of DTYPE_ORDER; PROMOTED_PAIRS are the pairs whose common type is
# neither (tests/runtime/test_join_promotion.py checks every pair against torch.promote_types)
DTYPE_ORDER = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
               "complex64", "complex128")
_CATEGORY = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1, "float16": 2, "bfloat16": 2,
             "float32": 2, "float64": 2, "complex64": 3, "complex128": 3}
PROMOTED_PAIRS = {frozenset({"uint8", "int8"}): "int16", frozenset({"float16", "bfloat16"}): "float32",
                  frozenset({"complex64", "float64"}): "complex128"}


def promote_types(a: str, b: str) -> str:
    """torch.promote_types on dtype names (``"float32"``, ``"int64"``): the common type of two tensors' dtypes."""
    if a == b:
        return a
    pair = PROMOTED_PAIRS.get(frozenset({a, b}))
    if pair is not None:
        return pair
    if _CATEGORY[a] != _CATEGORY[b]:
        return a if _CATEGORY[a] > _CATEGORY[b] else b
    return a if DTYPE_ORDER.index(a) > DTYPE_ORDER.index(b) else b


def result_type(names) -> str:
    """The common type of a sequence of tensors' dtype names, as torch's joins give it."""
    names = list(names)
    out = names[0]
    for name in names[1:]:
        out = promote_types(out, name)
    return out
