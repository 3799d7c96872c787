"""The converter rule RepeatedJoinTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/repeated_joins.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import code_of, head_name, int_literal
from mindport.migrator.walk import parse_expression

_JOINS = {"torch.cat": "cat", "torch.concat": "cat", "torch.concatenate": "cat", "torch.stack": "stack"}


class RepeatedJoinTransform(Rule):
    """``torch.cat([t] * n, dim=d)`` is ``ops.tile(t, ...)`` with ``n`` on axis ``d``; ``torch.stack([t] * n,
    dim=d)`` is the same tiling of ``ops.unsqueeze(t, d)``.

    Joining ``n`` copies of one tensor is tiling it: the same values, in the same order, of the same dtype. Capsule
    networks write it so (``torch.cat([self.W] * batch_size, dim=0)``, ``torch.cat([v_j] * self.in_channels,
    dim=1)`` with 1152 input capsules), and MindSpore's static graph (GRAPH_MODE, ``@jit``) unrolls a list of that
    many copies into nested calls: "Exceed function call depth limit 1000" from about 600 copies (measured on 2.10;
    kazukiii/caps-net-pytorch's CapsuleNetwork ms-failed). ``ops.tile`` takes the count as one number. Its
    multiples count axes from the last one (it puts ones in front of a shorter tuple), so a negative ``d`` needs no
    rank; a non-negative one reads ``t.ndim`` where ``t`` is a name or attributes of one (read twice, the same
    tensor), and otherwise tiles ``t.swapaxes(d, -1)`` on its last axis and swaps back. A join whose ``dim`` is not a
    literal, or of anything else, is left to the table.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch


                def route(W, v, u, batch_size, n):
                    W = torch.cat([W] * batch_size, dim=0)
                    v = torch.cat([v] * n, dim=1)
                    s = torch.stack([u] * n, dim=2)
                    return W, v, s, torch.cat(3 * [u.relu()], -1)
            """,
            after="""
                from mindspore import ops


                def route(W, v, u, batch_size, n):
                    W = ops.tile(W, (batch_size,) + (1,) * (W.ndim - 1))
                    v = ops.tile(v, (1,) + (n,) + (1,) * (v.ndim - 2))
                    s = ops.tile(ops.unsqueeze(u, 2), (1,) * 2 + (n,) + (1,) * (u.ndim - 2))
                    return W, v, s, ops.tile(ops.relu(u), (3,))
            """,
            note="Copies joined on an axis are the tensor tiled on it; a negative axis needs no rank.",
        ),
    )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        kind = _JOINS.get(self.scope.resolve_torch(original_node.func) or "")
        if kind is None:
            return updated_node
        args = list(updated_node.args)
        if not args or args[0].star or (args[0].keyword is not None and args[0].keyword.value != "tensors") \
                or any(a.star or (a.keyword is not None and a.keyword.value not in ("tensors", "dim", "axis"))
                       for a in args):
            return updated_node
        copies = _copies(args[0].value)
        dim = next((a.value for a in args if a.keyword is not None and a.keyword.value in ("dim", "axis")), None)
        if dim is None:
            dim = args[1].value if len(args) > 1 and args[1].keyword is None else cst.Integer("0")
        axis = int_literal(dim)
        if copies is None or axis is None:
            return updated_node
        tensor, count = copies
        count_text, tensor_text = code_of(count), code_of(tensor)
        tiled = tensor if kind == "cat" else cst.Call(  # a stack: the copies joined on a new axis
            func=self.ctx.target_expr("mindspore.ops.unsqueeze"),
            args=[cst.Arg(tensor), cst.Arg(cst.Integer(str(axis)) if axis >= 0 else dim)])
        self.ctx.converted_sites += 1
        if axis >= 0 and not head_name(tensor):
            # its rank would be read, and it is not a value that is the same when read twice: the axis swapped with
            # the last, tiled there (tile counts from the last axis), swapped back: the same join, the swap being
            # its own inverse (image-caption-pytorch's ``torch.cat([im_feat.unsqueeze(1)] * T, dim=1)``)
            inner = code_of(tiled)
            if not isinstance(tiled, (cst.Call, cst.Attribute, cst.Subscript, cst.Name)):
                inner = f"({inner})"
            tile = code_of(self.ctx.target_expr("mindspore.ops.tile"))
            return parse_expression(f"{tile}({inner}.swapaxes({axis}, -1), ({count_text},)).swapaxes({axis}, -1)")
        # the axes after the joined one: a stack's rank is ndim + 1
        after = f"{tensor_text}.ndim - {axis}" if kind == "stack" else f"{tensor_text}.ndim - {axis + 1}"
        if axis < 0:
            multiples = "(" + ", ".join([count_text] + ["1"] * (-axis - 1)) + ("," if axis == -1 else "") + ")"
        else:
            before = "" if axis == 0 else ("(1,) + " if axis == 1 else f"(1,) * {axis} + ")
            multiples = f"{before}({count_text},) + (1,) * ({after})"
        return cst.Call(func=self.ctx.target_expr("mindspore.ops.tile"),
                        args=[cst.Arg(tiled), cst.Arg(parse_expression(multiples))])


def _copies(expr) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(the tensor, the count) of ``[t] * n``, ``n * [t]`` or ``(t,) * n``; None for anything else."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)):
        return None
    for display, count in ((expr.left, expr.right), (expr.right, expr.left)):
        if isinstance(display, (cst.List, cst.Tuple)) and len(display.elements) == 1 \
                and isinstance(display.elements[0], cst.Element) and not isinstance(count, (cst.List, cst.Tuple)):
            return display.elements[0].value, count
    return None
