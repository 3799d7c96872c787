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
