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
    """In a model's methods and in module-level functions, ``sqrt(n)`` of ``from math import sqrt`` ->
    ``math.sqrt(n)``, read from the module
    (``import math`` added when the file binds none); ``math.sqrt(n)`` stays as written.

    The functions are Python's ``math`` functions of numbers (``sqrt``, ``log``, ``exp``, ``ceil``, ``floor``,
    ``pow`` ...).

    A model's ``forward`` computes sizes with ``math``: ``h = int(sqrt(tokens.shape[1]))`` before a reshape
    (vit-pytorch's PiT), or a module-level helper ``forward`` calls does (karras_unet's ``normalize_weight``:
    ``normed * sqrt(weight.numel() / weight.shape[0])``, then ``unpack_one``, whose plan could not read the
    interpreted tensor's shape: "__len__() should return >= 0"). MindSpore's static graph (GRAPH_MODE) runs a function it reaches by a bare name through its
    JIT Fallback: the result is an interpreted object, not a constant, a tensor reshaped with it is one too, and the
    next layer cannot read its shape ("The starred unpack merge input must be sequence, but got AbstractAny",
    measured on 2.10). Read from the ``math`` module, the graph compiles the call itself: every function of this
    rule's list of sizes (``math.sqrt``/``log``/``exp``/``ceil``/.../``lgamma``) compiled and gave a shape the next
    layer unpacks, with the numbers ``mp_graph_safe.math_call`` (computed while the graph compiles) gives, in both
    modes (measured on 2.10). In PyNative it is the very same function, whatever its argument. Only calls with
    positional arguments, resolved from the file's imports. Where ``math`` names something else in the file, the
    call goes through ``mp_graph_safe.math_call(sqrt, n)`` as before.
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
                import math


                class Pool(nn.Cell):
                    def construct(self, tokens):
                        h = int(math.sqrt(tokens.shape[1]))
                        return tokens.reshape(tokens.shape[0], h, h, -1)
            """,
            note="The graph compiles math.sqrt itself (a bare sqrt went through its JIT Fallback).",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self.runtime_modules: set[str] = set()  # read by finalize_runtime
        self.stdlib_modules: set[str] = set()  # ``import math`` for the calls written math.<fn> (finalize_runtime)
        self._classes = 0  # classes the visit is in

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        self._classes += 1

    def leave_ClassDef(self, original_node, updated_node):
        self._classes -= 1
        return updated_node

    def leave_Call(self, original_node, updated_node):
        helper = bool(self._compiled) and not self._classes  # a module-level function (forward may call it)
        if not (self.compiled or helper) or not updated_node.args \
                or any(a.keyword is not None or a.star for a in updated_node.args):
            return updated_node
        qual = self.scope.resolve(original_node.func)
        if qual not in _FUNCTIONS:
            return updated_node
        if isinstance(original_node.func, cst.Attribute):
            return updated_node  # math.sqrt(n): the graph compiles it
        found, bound = self.scope.lookup("math")
        if not found or bound == "math":
            if not found:
                self.stdlib_modules.add("math")
            return updated_node.with_changes(func=parse_expression(qual))
        self.runtime_modules.add(_RUNTIME)  # ``math`` is another name here: computed while the graph compiles
        self.ctx.converted_sites += 1
        args = [cst.Arg(updated_node.func, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                *updated_node.args]
        return updated_node.with_changes(func=parse_expression(f"{runtime_alias(_RUNTIME)}.math_call"), args=args)
