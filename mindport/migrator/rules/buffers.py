"""The converter rule BufferTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/buffers.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.syntax import NO_SPACE_EQUAL, head_name, method_call, receiver
from mindport.migrator.walk import parse_expression


class BufferTransform(Rule):
    """``self.register_buffer("name", t)`` -> ``self.name = ms.Parameter(t, name="name", requires_grad=False)``.

    MindSpore buffers do not reach checkpoints; a persistent torch buffer is in the state_dict, so it becomes a
    non-trainable Parameter that save_checkpoint/load_checkpoint carry. Non-persistent buffers stay buffers.
    A persistent ``register_buffer("name", None)`` (an optional buffer left empty; torch's state_dict skips it) is
    ``self.name = None`` (``ms.Parameter(None)`` raises); a non-persistent one stays, to be filled by a later
    ``register_buffer`` (a cache). A value that may be None on some runs only (read from a name,
    ``self.register_buffer("attn_mask", attn_mask)``; a conditional, ``mask if mask.any() else None``; a call of the
    model's own function) is decided when it runs: ``mp_containers.buffer(attn_mask, "attn_mask")``, None stays None
    (torch's attribute reads None and its state_dict leaves the buffer out), a tensor is the frozen Parameter.

    A parameter frozen from the start, ``nn.Parameter(t, requires_grad=False)``, is one of torch's ``parameters()``,
    not a buffer: ``mp_inplace.requires_grad_(ms.Parameter(t), requires_grad=False)`` marks it frozen
    (:mod:`mindport.runtime.frozen`), so ``mp_containers.parameters``/``named_parameters`` list it and ``buffers()``
    does not (a bare ``ms.Parameter(t, requires_grad=False)`` is what a buffer became).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Rope(nn.Module):
                    def __init__(self, dim):
                        super().__init__()
                        self.register_buffer("inv_freq", torch.arange(0, dim, 2).float() / dim)
                        self.register_buffer("cache", torch.zeros(dim), persistent=False)
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindspore import ops


                class Rope(nn.Cell):
                    def __init__(self, dim):
                        super().__init__()
                        self.inv_freq = ms.Parameter(ops.arange(start=0, end=dim, step=2).astype(ms.float32) / dim, name="inv_freq", requires_grad=False)
                        self.register_buffer("cache", ops.zeros(dim), persistent=False)
            """,
            note='A persistent buffer reaches the checkpoint as a frozen Parameter; a non-persistent one stays a buffer.',
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Scaled(nn.Module):
                    def __init__(self, dim):
                        super().__init__()
                        self.scale = nn.Parameter(torch.ones(dim), requires_grad=False)
            """,
            after="""
                import mindspore as ms
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import inplace as mp_inplace


                class Scaled(nn.Cell):
                    def __init__(self, dim):
                        super().__init__()
                        self.scale = mp_inplace.requires_grad_(ms.Parameter(ops.ones(dim)), requires_grad=False)
            """,
            note="A parameter frozen from the start is marked frozen: torch's parameters() lists it, buffers() does not.",
        ),
    )

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Expr):
            call = method_call(updated_node.body[0].value, "register_buffer")
            if call is not None:
                return self._rewrite(updated_node, call)
        return updated_node

    def leave_Call(self, original_node, updated_node):
        """``nn.Parameter(t, requires_grad=flag)``, flag not True: made trainable, then frozen by requires_grad_."""
        if self.scope.resolve_torch(original_node.func) not in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return updated_node
        args = list(updated_node.args)
        flag = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "requires_grad"),
                    1 if len(args) > 1 and args[1].keyword is None else None)
        if flag is None or any(a.star for a in args) or (
                isinstance(args[flag].value, cst.Name) and args[flag].value.value == "True"):
            return updated_node
        value = args[flag].value
        rest = [a for i, a in enumerate(args) if i != flag]
        rest = [a.with_changes(keyword=cst.Name("default_input")) if a.keyword is not None and a.keyword.value == "data"
                else a for a in rest]
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.ctx.converted_sites += 1
        self.ctx.handled.add(id(original_node))
        param = cst.Call(func=parse_expression(f"{self.ctx.alias_for('mindspore')}.Parameter"), args=rest)
        return cst.Call(func=self.ctx.target_expr("mindport.runtime.inplace.requires_grad_"), args=[
            cst.Arg(param, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(keyword=cst.Name("requires_grad"), value=value, equal=NO_SPACE_EQUAL)])

    def _rewrite(self, line, call: cst.Call):
        args = {a.keyword.value if a.keyword else i: a.value for i, a in enumerate(call.args)}
        name = args.get(0, args.get("name"))
        tensor = args.get(1, args.get("tensor"))
        persistent = args.get(2, args.get("persistent"))
        if not isinstance(name, cst.SimpleString) or tensor is None:
            return line
        if persistent is not None and not (isinstance(persistent, cst.Name) and persistent.value == "True"):
            return line  # non-persistent: MindSpore's Cell.register_buffer has the same meaning (None too)
        if isinstance(tensor, cst.Name) and tensor.value == "None":  # a buffer slot left empty: reads give None
            self.ctx.converted_sites += 1
            target = cst.Attribute(value=receiver(call), attr=cst.Name(name.evaluated_value))
            return line.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(target)], value=cst.Name("None"))])
        owner = receiver(call)
        if self._may_be_none(tensor):
            # a value known only at run time may be None (``attn_mask = ... if cfg.mask else None``): decided when
            # it runs, None stays None (torch registers None; the state_dict leaves it out)
            param = cst.Call(func=self.ctx.target_expr("mindport.runtime.containers.buffer"), args=[
                cst.Arg(tensor, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(name)])
        else:
            param = cst.Call(func=parse_expression(f"{self.ctx.alias_for('mindspore')}.Parameter"), args=[
                cst.Arg(tensor),
                cst.Arg(keyword=cst.Name("name"), value=name, equal=NO_SPACE_EQUAL),
                cst.Arg(keyword=cst.Name("requires_grad"), value=cst.Name("False"), equal=NO_SPACE_EQUAL),
            ])
        target = cst.Attribute(value=owner, attr=cst.Name(name.evaluated_value))
        self.ctx.converted_sites += 1
        return line.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(target)], value=param)])

    def _may_be_none(self, value: cst.BaseExpression) -> bool:
        """Can the value be None when the code runs: a name or attribute not known to hold a tensor, a conditional
        or boolean expression with such a branch (``x if cond else None``), a call of a function of the model's."""
        if isinstance(value, cst.Name):
            return value.value == "None" or self.scope.kind_of(value.value) != "tensor"
        if isinstance(value, cst.Attribute):
            return self.scope.kind_of(head_name(value)) != "tensor"
        if isinstance(value, cst.IfExp):
            return self._may_be_none(value.body) or self._may_be_none(value.orelse)
        if isinstance(value, cst.BooleanOperation):
            return self._may_be_none(value.left) or self._may_be_none(value.right)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            return self.scope.resolve_torch(value.func) is None  # make_mask(cfg): the model's own function
        return False


