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
    ``self.name = None`` (``ms.Parameter(None)`` raises), and a later ``self.name = v`` in ``__init__`` fills it
    (torch stores ``v`` as the buffer): ``mp_containers.buffer(v, "name")``; a non-persistent one stays, to be filled
    by a later ``register_buffer`` (a cache). A value that may be None on some runs only (read from a name,
    ``self.register_buffer("attn_mask", attn_mask)``; a conditional, ``mask if mask.any() else None``; a call of the
    model's own function) is decided when it runs: ``mp_containers.buffer(attn_mask, "attn_mask")``, None stays None
    (torch's attribute reads None and its state_dict leaves the buffer out), a tensor is the frozen Parameter.

    A parameter frozen from the start, ``nn.Parameter(t, requires_grad=False)``, is one of torch's ``parameters()``,
    not a buffer: ``mp_inplace.requires_grad_(ms.Parameter(t), requires_grad=False)`` marks it frozen
    (:mod:`mindport.runtime.frozen`), so ``mp_containers.parameters``/``named_parameters`` list it and ``buffers()``
    does not (a bare ``ms.Parameter(t, requires_grad=False)`` is what a buffer became).

    Assigning to a buffer the class keeps as a MindSpore buffer (a non-persistent ``register_buffer`` of the class,
    a tensor or None): torch's ``self.cache = t`` replaces the buffer (``_buffers[name] = t``, its persistence kept),
    while MindSpore's ``Cell.__setattr__`` refuses a plain Tensor for a registered buffer name ("Buffer 'cache'
    already exists in network, can not assign this type"). ``self.cache = t`` (and ``self.cache += t``) in that
    class become ``self.register_buffer("cache", t, persistent=False)``, which replaces it as torch's assignment does
    (None too). A static graph refuses ``register_buffer`` in ``construct``: loud there, never a stale buffer; where
    the method tests the buffer first (a cache: ``if self.cache.numel() == 0``), SelfCacheTransform writes it as
    ``mp_framework.keep_buffer`` (PyNative registers it; a graph builds it on each call, with MP107).
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
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Basis(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.register_buffer("cache", torch.empty(0), persistent=False)

                    def forward(self, x):
                        if self.cache.numel() == 0:
                            self.cache = x.detach()
                        return x + self.cache
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import framework as mp_framework


                class Basis(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.register_buffer("cache", ops.zeros(0), persistent=False)

                    def construct(self, x):
                        _mp_cache = self.cache
                        if _mp_cache.numel() == 0:
                            _mp_cache = mp_framework.keep_buffer(self, "cache", ops.stop_gradient(x), persistent=False)  # mindport: MP107 construct caches self.cache in a buffer: PyNative keeps it from one call to the next, a static graph (GRAPH_MODE) keeps no buffer registered there and builds it again on each call (the same value when it depends only on sizes and settings, not on an earlier input)
                        return x + _mp_cache
            """,
            note="Assigning to a non-persistent buffer replaces it, as torch's assignment does (MindSpore's refuses); "
                 "a cache so kept in forward is SelfCacheTransform's keep_buffer, read through a local, with MP107.",
        ),
    )

    def visit_ClassDef(self, node):
        self._kept_buffers = getattr(self, "_kept_buffers", [])
        self._kept_buffers.append(kept_buffer_names(node))
        self._empty_buffers = getattr(self, "_empty_buffers", [])
        self._empty_buffers.append(empty_buffer_names(node))

    def leave_ClassDef(self, original_node, updated_node):
        self._kept_buffers.pop()
        self._empty_buffers.pop()
        return updated_node

    def visit_FunctionDef(self, node):
        self._functions = getattr(self, "_functions", [])
        self._functions.append(node.name.value)

    def leave_FunctionDef(self, original_node, updated_node):
        self._functions.pop()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Expr):
            call = method_call(updated_node.body[0].value, "register_buffer")
            if call is not None:
                return self._rewrite(updated_node, call)
        if len(updated_node.body) == 1 and getattr(self, "_empty_buffers", None) and self._empty_buffers[-1] \
                and getattr(self, "_functions", None) and self._functions[-1] == "__init__":
            filled = self._filled_buffer(updated_node)
            if filled is not None:
                return filled
        if len(updated_node.body) == 1 and getattr(self, "_kept_buffers", None) and self._kept_buffers[-1]:
            return self._buffer_assignment(updated_node)
        return updated_node

    def _filled_buffer(self, line):
        """``self.<name> = v`` in ``__init__`` after a persistent ``register_buffer("<name>", None)``: torch stores
        ``v`` as that buffer (in the state_dict), so it is ``mp_containers.buffer(v, "<name>")`` (JunyuanHe's RoPE
        attention: ``register_buffer("rope_sin", None)`` then ``self.rope_sin = sin``; a plain attribute before, and
        the weights did not move: "torch tensors unmatched: rope_sin, rope_cos")."""
        stmt = line.body[0]
        if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1):
            return None
        target = stmt.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self" and target.attr.value in self._empty_buffers[-1]) \
                or (isinstance(stmt.value, cst.Name) and stmt.value.value == "None"):
            return None
        self.ctx.converted_sites += 1
        value = cst.Call(func=self.ctx.target_expr("mindport.runtime.containers.buffer"), args=[
            cst.Arg(stmt.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.SimpleString(f'"{target.attr.value}"'))])
        return line.with_changes(body=[stmt.with_changes(value=value)])

    def _buffer_assignment(self, line):
        """``self.<buffer> = v`` / ``self.<buffer> op= v`` for a buffer kept as a MindSpore buffer ->
        ``self.register_buffer("<buffer>", v, persistent=False)`` (torch's assignment replaces the buffer)."""
        stmt = line.body[0]
        if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0].target, stmt.value
        elif isinstance(stmt, cst.AugAssign):
            target = stmt.target
            op = getattr(cst, type(stmt.operator).__name__.replace("Assign", ""), None)
            if op is None:
                return line
            value = cst.BinaryOperation(left=stmt.target, operator=op(), right=stmt.value)
        else:
            return line
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self" and target.attr.value in self._kept_buffers[-1]):
            return line
        self.ctx.converted_sites += 1
        call = cst.Call(func=cst.Attribute(value=cst.Name("self"), attr=cst.Name("register_buffer")), args=[
            cst.Arg(cst.SimpleString(f'"{target.attr.value}"')), cst.Arg(value),
            cst.Arg(keyword=cst.Name("persistent"), value=cst.Name("False"), equal=NO_SPACE_EQUAL)])
        return line.with_changes(body=[cst.Expr(call)])

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




def kept_buffer_names(cls: cst.ClassDef) -> frozenset[str]:
    """The buffers a class registers on ``self`` that stay MindSpore buffers: ``self.register_buffer("n", v,
    persistent=<anything but True>)`` (a persistent one becomes a Parameter, or ``None`` a plain attribute)."""
    return frozenset(name for name, _, persistent in _self_buffers(cls) if persistent is not None and not (
        isinstance(persistent, cst.Name) and persistent.value == "True"))


def empty_buffer_names(cls: cst.ClassDef) -> frozenset[str]:
    """The persistent buffers a class registers empty: ``self.register_buffer("n", None)`` (persistence not False)."""
    return frozenset(name for name, tensor, persistent in _self_buffers(cls)
                     if isinstance(tensor, cst.Name) and tensor.value == "None" and (
                         persistent is None or (isinstance(persistent, cst.Name) and persistent.value == "True")))


def _self_buffers(cls: cst.ClassDef):
    """(name, tensor, persistent) of each ``self.register_buffer("name", tensor, persistent)`` in the class (the
    arguments by position or keyword; None where not given)."""
    for node in _walk(cls):
        call = method_call(node, "register_buffer") if isinstance(node, cst.Call) else None
        if call is None or not (isinstance(receiver(call), cst.Name) and receiver(call).value == "self"):
            continue
        args = {a.keyword.value if a.keyword else i: a.value for i, a in enumerate(call.args)}
        name = args.get(0, args.get("name"))
        if isinstance(name, cst.SimpleString):
            yield name.evaluated_value, args.get(1, args.get("tensor")), args.get(2, args.get("persistent"))


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)
