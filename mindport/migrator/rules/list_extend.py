"""The converter rule ListExtendTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/list_extend.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example
from mindport.migrator.rules.list_pop import OwnListRule


class ListExtendTransform(OwnListRule):
    """In a model's methods, ``xs.extend(ys)`` as a statement, on a list the method builds (``xs = []``), becomes
    ``xs = xs + list(ys)`` (``xs = xs + [a, b]`` for a list display).

    MindSpore 2.10's static graph (GRAPH_MODE, ``@jit``) compiles ``list.extend`` and then reads the outputs of a
    multi-output op on a tensor computed from that list wrong, silently: after ``ss.extend([s, t])`` and ``g =
    ops.cat([... for t in ss])``, ``z, r = ops.split(g, 8, axis=-1)`` (or ``chunk``, ``unstack``, ``topk``, unpacked
    or indexed, in the same Cell or its caller) gives ``r = z[1]``, a row of the first output where PyNative gives the
    second chunk; ``+`` and ``+=`` do not. MegaCRN's AGCN (Chebyshev
    supports gathered with ``support_set.extend(support_ks)``) fed its GRU gate so: max rel 1.18 against torch in
    GRAPH_MODE, 1.6e-6 in PyNative. ``xs = xs + list(ys)`` compiles to the same list and the caller's numbers are
    torch's in both modes. Only lists the method itself builds and never hands over whole (``self.cache = xs`` would
    see the rebinding), ``extend`` with one positional argument, as a statement of its own.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Cheb(nn.Module):
                    def forward(self, x, supports):
                        support_set = []
                        for support in supports:
                            support_ks = [torch.eye(support.shape[0]), support]
                            support_set.extend(support_ks)
                            support_set.extend([support * 2])
                        return torch.cat([s @ x for s in support_set], dim=-1)
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor


                class Cheb(nn.Cell):
                    def construct(self, x, supports):
                        support_set = []
                        for support in supports:
                            support_ks = [ops.eye(support.shape[0]), support]
                            support_set = support_set + list(support_ks)
                            support_set = support_set + [support * 2]
                        return ops.cat(mp_tensor.promoted([s @ x for s in support_set]), axis=-1)
            """,
            note="The list is re-bound to the concatenation, which a static graph keeps.",
        ),
    )

    def leave_SimpleStatementLine(self, original_node, updated_node):
        lists = self._lists[-1] if self._lists else None
        if not lists or len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.Expr):
            return updated_node
        call = updated_node.body[0].value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "extend"
                and isinstance(call.func.value, cst.Name) and call.func.value.value in lists and len(call.args) == 1
                and call.args[0].keyword is None and not call.args[0].star):
            return updated_node
        items = call.args[0].value
        if not isinstance(items, cst.List):
            items = cst.Call(cst.Name("list"), [cst.Arg(items)])
        name = call.func.value
        self.ctx.converted_sites += 1
        return updated_node.with_changes(body=[cst.Assign(
            [cst.AssignTarget(name)], cst.BinaryOperation(name, cst.Add(), items))])
