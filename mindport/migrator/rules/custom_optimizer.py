"""The converter rule CustomOptimizerTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/custom_optimizer.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.walk import parse_expression, parse_statement

_OPTIMIZER_BASES = {"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"}


class CustomOptimizerTransform(Rule):
    """A hand-written optimizer: ``class MySGD(torch.optim.Optimizer)`` with ``step(self, closure=None)`` reading
    ``p.grad`` -> ``construct(self, gradients, closure=None)`` (what ``optimizer(grads)`` calls in MindSpore), where
    ``p.grad`` is the gradient of ``p`` from ``gradients`` (aligned with ``self.parameters``). The in-place updates
    of ``p`` and of the state tensors are the table's (``mindport.runtime.inplace``). A parameter with no gradient
    path gets a zero gradient in MindSpore where torch has None: ``if p.grad is None`` skips nothing. A subclass of
    such a class overriding ``step`` (cs336's AdamWextra: clipping through a helper reading ``p.grad``, a schedule in
    ``self.state[p]``, then ``super().step(closure)``) gets ``construct(self, gradients, closure)`` too, which puts
    the gradients on the parameters' ``.grad`` (``mindport.runtime.optim.set_grads``), keeps its body's ``p.grad``
    as torch's, and hands ``super().construct`` what ``.grad`` holds then (``live_gradients``). The base is
    ``mindport.runtime.optim.Optimizer`` (MindSpore's experimental Optimizer, whose groups keep torch's keys: its
    own needs an "lr" in every group)."""

    EXAMPLES = (
        Example(
            before="""
                import torch


                class MySGD(torch.optim.Optimizer):
                    def step(self, closure=None):
                        for group in self.param_groups:
                            for p in group["params"]:
                                p.sub_(group["lr"] * p.grad)
            """,
            after="""
                from mindport.runtime import optim as mp_optim
                from mindport.runtime import inplace as mp_inplace


                class MySGD(mp_optim.Optimizer):
                    def construct(self, gradients, closure=None):
                        _grads = {id(param): grad for param, grad in zip(self.parameters, gradients)}
                        for group in self.param_groups:
                            for p in group["params"]:
                                p = mp_inplace.sub_(p, other=group["lr"] * _grads[id(p)])
            """,
            note='step(self, closure) becomes construct(self, gradients, closure); p.grad reads the gradient that belongs to p.',
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: list[str | None] = []  # "torch" (a torch.optim.Optimizer base), "own" (a base of the file's)
        self._optimizers: set[str] = set()  # the file's hand-written optimizer classes, by name
        self._in_step = 0

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [b for b in node.bases if self.scope.resolve_torch(b.value) in _OPTIMIZER_BASES]
        for base in bases:
            self.ctx.handled.add(id(base.value))
        own = any(isinstance(b.value, cst.Name) and b.value.value in self._optimizers for b in node.bases)
        kind = "torch" if bases else "own" if own else None
        if kind:
            self._optimizers.add(node.name.value)
        self._classes.append(kind)

    def leave_ClassDef(self, original_node, updated_node):
        if self._classes.pop() != "torch":
            return updated_node
        # the base is mindport.runtime.optim.Optimizer: MindSpore's experimental Optimizer, whose groups keep
        # torch's keys (MindSpore's needs an "lr" in each: defaults naming the rate "alpha" were refused)
        base = parse_expression(f"{self.ctx.alias_for('mindport.runtime.optim')}.Optimizer")
        bases = [b.with_changes(value=base) if self.scope.resolve_torch(o.value) in _OPTIMIZER_BASES else b
                 for o, b in zip(original_node.bases, updated_node.bases)]
        return updated_node.with_changes(bases=bases)

    def _is_step(self, node: cst.FunctionDef) -> bool:
        return bool(self._classes) and self._classes[-1] is not None and node.name.value == "step"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._is_step(node):
            self._in_step += 1

    def leave_Attribute(self, original_node, updated_node):
        if self._in_step and self._classes[-1] == "torch" and updated_node.attr.value == "grad" \
                and isinstance(updated_node.value, cst.Name):
            return parse_expression(f"_grads[id({updated_node.value.value})]")
        return updated_node

    def leave_FunctionDef(self, original_node, updated_node):
        if not self._is_step(original_node):
            return updated_node
        self._in_step -= 1
        params = updated_node.params
        extra = [p for p in params.params[1:] if p.name.value != "closure"]
        if extra or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg:
            self.flag(original_node, "MP105", "optimizer step with arguments other than closure",
                      "write construct(self, gradients) by hand", "torch.optim.Optimizer")
            return updated_node
        closure = [p for p in params.params[1:]]
        self.ctx.converted_sites += 1
        if self._classes[-1] == "own":
            # a subclass of the file's optimizer: its body reads and writes p.grad as torch's does (a helper clips
            # them), and super().step(closure) hands the base what .grad then holds
            optim = self.ctx.alias_for("mindport.runtime.optim")
            grads = parse_statement(f"{optim}.set_grads(self, gradients)")
            body = updated_node.body.visit(_SuperStep(optim))
        else:
            grads = parse_statement("_grads = {id(param): grad for param, grad in zip(self.parameters, gradients)}")
            body = updated_node.body
        body = body.with_changes(body=[grads, *body.body])
        return updated_node.with_changes(
            name=cst.Name("construct"), body=body,
            params=params.with_changes(params=[params.params[0], cst.Param(cst.Name("gradients")), *closure]))


class _SuperStep(cst.CSTTransformer):
    """``super().step(closure)`` in a subclass's step -> ``super().construct(mp_optim.live_gradients(self),
    closure)``: the base's construct takes the gradients as the subclass's body left them on ``.grad``."""

    def __init__(self, optim: str) -> None:
        super().__init__()
        self._optim = optim

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "step" and isinstance(func.value, cst.Call) \
                and isinstance(func.value.func, cst.Name) and func.value.func.value == "super":
            live = cst.Arg(parse_expression(f"{self._optim}.live_gradients(self)"))
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("construct")),
                                             args=[live, *updated_node.args])
        return updated_node
