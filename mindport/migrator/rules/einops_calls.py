"""einops calls with a literal pattern -> MindSpore operations written out at conversion time."""
from __future__ import annotations

import ast

import libcst as cst
from libcst import parse_expression

from mindport.migrator.einops_patterns import FUNCTIONS, compile_einops
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import code_of

_ROLES = {"rearrange": ("tensor", "pattern"), "repeat": ("tensor", "pattern"),
          "reduce": ("tensor", "pattern", "reduction")}


class EinopsPatternTransform(Rule):
    """``einops.rearrange``/``reduce``/``repeat`` with a string-literal pattern become explicit
    ``reshape``/``transpose``/reduction/broadcast operations (``mindport/migrator/einops_patterns.py`` compiles the
    pattern; unnamed lengths are read from the tensor's shape at run time).

    Why: the converted code then needs neither einops nor mindport's einops backend at run time, and it compiles in
    GRAPH_MODE like any other MindSpore code. A call the compiler declines (a pattern that is not a literal,
    ``**kwargs``, a callable reduction, a pattern einops itself rejects) is left as it is: einops runs it on
    MindSpore tensors through ``mindport.runtime.einops_backend``, with einops' own checks and errors.
    """

    EXAMPLES = (
        Example(
            before="""
                from einops import rearrange, reduce


                def heads(x, h):
                    return rearrange(x, "b n (h d) -> b h n d", h=h)


                def pool(x):
                    return reduce(x, "b c h w -> b c", "mean")
            """,
            after="""
                from einops import rearrange, reduce
                from mindspore import ops
                import mindport.runtime.einops_backend  # noqa: F401  (einops backend for MindSpore tensors)


                def heads(x, h):
                    return ops.transpose(ops.reshape(x, (x.shape[0], x.shape[1], h, x.shape[2] // h)), (0, 2, 1, 3))


                def pool(x):
                    return ops.mean(x, (2, 3))
            """,
            note="Literal patterns are written out as operations; the lengths einops would infer come from x.shape.",
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        module, _, function = (self.scope.resolve(original_node.func) or "").rpartition(".")
        if module != "einops" or function not in FUNCTIONS:
            return updated_node
        roles = _bind(function, updated_node.args)
        if roles is None:
            return updated_node
        pattern = _literal(roles.pop("pattern", None))
        if not isinstance(pattern, str) or "tensor" not in roles:
            return updated_node
        reduction = roles.pop("reduction", None)
        reduction = _literal(reduction) if reduction is not None else None
        tensor = code_of(roles.pop("tensor"))
        axes = {name: code_of(value) for name, value in roles.items()}
        compiled = compile_einops(function, pattern, axes, tensor, self.ctx.ops_name(),
                                  reduction if isinstance(reduction, str) else None)
        if compiled is None:
            return updated_node
        self.ctx.alias_for("mindspore.ops")  # the import, scheduled only for a call that is written out
        self.ctx.converted_sites += 1
        return parse_expression(compiled)


def _bind(function: str, args) -> dict | None:
    """{role or axis name: value expression}, or None for a call whose arguments are known only at run time."""
    names = _ROLES[function]
    bound: dict = {}
    positional = [a for a in args if a.keyword is None]
    if any(a.star for a in args) or len(positional) > len(names):
        return None
    for name, arg in zip(names, positional):
        bound[name] = arg.value
    for arg in args:
        if arg.keyword is not None:
            if arg.keyword.value in bound:
                return None
            bound[arg.keyword.value] = arg.value
    return bound


def _literal(node):
    """The value of a plain string literal (implicit concatenation included), else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = ast.literal_eval(code_of(node))
        except (ValueError, SyntaxError):
            return None
        return value if isinstance(value, str) else None
    return None
