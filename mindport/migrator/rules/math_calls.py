"""The converter rule MathCallTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/math_calls.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.imports import runtime_alias
from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.walk import parse_expression

_RUNTIME = "mindport.runtime.graph_safe"
# Python's math functions of numbers (the ones a model computes sizes and scales with)
_FUNCTIONS = frozenset(f"math.{name}" for name in (
    "sqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "pow", "ceil", "floor", "trunc", "fabs", "sin", "cos",
    "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "hypot", "gcd", "lcm", "factorial", "comb",
    "perm", "copysign", "fmod", "degrees", "radians", "erf", "erfc", "gamma", "lgamma"))


class MathCallTransform(GraphMethodRule):
    """In a model's methods, a call of one of Python's ``math`` functions (``sqrt``, ``log``, ``exp``, ``ceil``,
    ``floor``, ``pow`` and the other functions of numbers) -> ``mp_graph_safe.math_call(math.sqrt, n)``.

    A model's ``forward`` computes sizes with ``math``: ``h = int(sqrt(tokens.shape[1]))`` before a reshape
    (vit-pytorch's PiT). MindSpore's static graph (GRAPH_MODE) runs ``math``'s functions through its JIT Fallback:
    the result is an interpreted object, not a constant, a tensor reshaped with it is one too, and the next layer
    cannot read its shape ("The starred unpack merge input must be sequence, but got AbstractAny", measured on 2.10).
    ``math_call`` computes the value while the graph compiles when every argument is a number (shapes and sizes are
    constants there), Python's own result; any other argument (a tensor) gets the function as before, and in
    PyNative it is the function. Only calls with positional arguments, resolved from the file's imports (``import
    math`` or ``from math import sqrt``).
    """

    EXAMPLES = (
        Example(
            before="""
                from math import sqrt

                import torch.nn as nn


                class Pool(nn.Module):
                    def forward(self, tokens):
                        h = int(sqrt(tokens.shape[1]))
                        return tokens.reshape(tokens.shape[0], h, h, -1)
            """,
            after="""
                from math import sqrt

                from mindspore import nn
                from mindport.runtime import graph_safe as mp_graph_safe


                class Pool(nn.Cell):
                    def construct(self, tokens):
                        h = int(mp_graph_safe.math_call(sqrt, tokens.shape[1]))
                        return tokens.reshape(tokens.shape[0], h, h, -1)
            """,
            note="The size is computed while the graph compiles.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime

    def leave_Call(self, original_node, updated_node):
        if not self.compiled or not updated_node.args \
                or any(a.keyword is not None or a.star for a in updated_node.args):
            return updated_node
        if self.scope.resolve(original_node.func) not in _FUNCTIONS:
            return updated_node
        self.runtime_modules.add(_RUNTIME)
        self.ctx.converted_sites += 1
        args = [cst.Arg(updated_node.func, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                *updated_node.args]
        return updated_node.with_changes(func=parse_expression(f"{runtime_alias(_RUNTIME)}.math_call"), args=args)
